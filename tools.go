//go:build tools

// Package tools pins the code generators this module runs (gqlgen), so that
// `go run github.com/99designs/gqlgen` and `make generate` (internal/generate,
// which runs gqlgen as a library) use the version in go.mod.
package tools

import (
	_ "github.com/99designs/gqlgen"
)
