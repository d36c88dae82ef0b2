package documents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// ApolloFormat is the format field of an Apollo persisted query manifest
// (@apollo/generate-persisted-query-manifest).
const ApolloFormat = "apollo-persisted-query-manifest"

// apolloManifest is an Apollo persisted query manifest, version 1.
type apolloManifest struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Operations []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
		Body string `json:"body"`
	} `json:"operations"`
}

// ParseManifest reads the documents of a manifest: an Apollo persisted
// query manifest (`{"format":"apollo-persisted-query-manifest",
// "version":1,"operations":[{"id","name","type","body"}]}`, whose ids
// @apollo/generate-persisted-query-manifest makes the SHA-256 of each body)
// or a Relay persistConfig output (`{"<id>": "<text>", ...}`, written by
// relay-compiler with persistConfig's algorithm SHA256). Every id must be
// the SHA-256 of its text (hex, or "sha256:<hex>"): the gateway names a
// document by that hash alone. The documents come back in the manifest's
// order (a Relay output's in id order), without Names (the schema check,
// the server's ValidateDocument, gives them). Errors name the manifest's
// problem and the operation it is in; nothing is returned then.
func ParseManifest(data []byte) ([]Document, error) {
	data = bytes.TrimSpace(data)
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("the manifest is not valid UTF-8")
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("the manifest must be a JSON object: an Apollo persisted query manifest or a Relay persistConfig output")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("the manifest is not valid JSON: %v", err)
	}
	var out []Document
	if _, ok := probe["format"]; ok {
		var m apolloManifest
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("the Apollo manifest does not have the shape of format %s version 1: %v", ApolloFormat, err)
		}
		if m.Format != ApolloFormat || m.Version != 1 {
			return nil, fmt.Errorf("the manifest's format is %q version %d; the gateway reads %q version 1", m.Format, m.Version, ApolloFormat)
		}
		for i, op := range m.Operations {
			d, err := document(op.ID, op.Body)
			if err != nil {
				return nil, fmt.Errorf("operation %d (%s): %v", i, op.Name, err)
			}
			out = append(out, d)
		}
	} else {
		ids := make([]string, 0, len(probe))
		for id := range probe {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			var text string
			if err := json.Unmarshal(probe[id], &text); err != nil {
				return nil, fmt.Errorf("document %s: a Relay persistConfig output maps each id to its text (a JSON string)", id)
			}
			d, err := document(id, text)
			if err != nil {
				return nil, fmt.Errorf("document %s: %v", id, err)
			}
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the manifest holds no documents")
	}
	return out, nil
}

// document checks that id (hex or "sha256:<hex>") is the SHA-256 of text.
func document(id, text string) (Document, error) {
	if strings.TrimSpace(text) == "" {
		return Document{}, fmt.Errorf("the document's text is empty")
	}
	want := IDOf(text)
	if _, ok := ParseID(id); !ok || IDPrefix+strings.ToLower(strings.TrimPrefix(id, IDPrefix)) != want {
		return Document{}, fmt.Errorf("the id %q is not the SHA-256 of the text (%s): build the manifest with SHA-256 ids (Relay: persistConfig's algorithm SHA256)", id, want)
	}
	return Document{ID: want, Text: text}, nil
}
