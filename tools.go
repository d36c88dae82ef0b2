//go:build tools

// Package tools pins the code generators this module runs, so that go.mod
// holds their versions: gqlgen, which graph/ and the resolver stubs are
// generated with.
//
// Generate with `go generate ./...` or `make generate`: both run
// internal/generate, which runs gqlgen (this version, gqlgen.yml) as a
// library and then rewrites its output (list marshalling, field execution
// and response buffers; see internal/generate and docs/gqlgen.md). Running
// gqlgen alone (`go run github.com/99designs/gqlgen`) would write graph/
// without those rewrites: the gateway would still build and serve, slower,
// and the next `make generate` would put them back.
package tools

import (
	_ "github.com/99designs/gqlgen"
)
