package server

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weibohbase/gateway/weibo"
)

func TestDecodeBody(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		n     int    // requests decoded
		batch bool   // an array
		code  string // "" = decoded
	}{
		{"one request", `{"query": "{ a }", "operationName": "A", "variables": {"n": 1}, "extensions": {}}`, 1, false, ""},
		{"white space first", " \n\t{\"query\": \"{ a }\"}", 1, false, ""},
		{"null fields", `{"query": "{ a }", "operationName": null, "variables": null}`, 1, false, ""},
		{"a persisted-query hash only", `{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "ab"}}}`, 1, false, ""},
		{"a batch", `[{"query": "{ a }"}, {"query": "{ b }"}]`, 2, true, ""},
		{"a surrogate pair", `{"query": "{ a }", "variables": {"s": "\ud83d\ude00"}}`, 1, false, ""},
		{"empty", ``, 0, false, CodeBadRequest},
		{"spaces", `   `, 0, false, CodeBadRequest},
		{"truncated", `{"query": "{ a }"`, 0, false, CodeBadRequest},
		{"trailing value", `{"query": "{ a }"} {}`, 0, false, CodeBadRequest},
		{"trailing garbage", `{"query": "{ a }"} x`, 0, false, CodeBadRequest},
		{"a number", `5`, 0, false, CodeBadRequest},
		{"query is a number", `{"query": 5}`, 0, false, CodeBadRequest},
		{"variables is a list", `{"query": "{ a }", "variables": []}`, 0, false, CodeBadRequest},
		{"no query", `{}`, 0, false, CodeBadRequest},
		{"empty batch", `[]`, 0, true, CodeBadRequest},
		{"batch too long", "[" + strings.Repeat(`{"query": "{ a }"},`, 3) + `{"query": "{ a }"}]`, 0, true, CodeBadRequest},
		{"batch of non-objects", `[1, 2]`, 0, true, CodeBadRequest},
		{"batch item without query", `[{"query": "{ a }"}, {}]`, 0, true, CodeBadRequest},
		{"nested 65 deep", `{"query": "{ a }", "variables": {"x": ` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}}`, 0, false, CodeBadRequest},
		{"nested 64 deep", `{"query": "{ a }", "variables": {"x": ` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}}`, 1, false, ""},
		{"brackets in strings do not nest", `{"query": "` + strings.Repeat("[{", 100) + `"}`, 1, false, ""},
		{"invalid UTF-8", "{\"query\": \"{ a }\", \"variables\": {\"c\": \"\xff\"}}", 0, false, weibo.CodeBadUserInput},
		{"a lone high surrogate", `{"query": "{ a }", "variables": {"c": "\ud800"}}`, 0, false, weibo.CodeBadUserInput},
		{"a lone low surrogate", `{"query": "{ a }", "variables": {"c": "\udc00x"}}`, 0, false, weibo.CodeBadUserInput},
		{"a high surrogate and a letter", `{"query": "{ a }", "variables": {"c": "\ud800\u0041"}}`, 0, false, weibo.CodeBadUserInput},
		{"escaped backslash before u", `{"query": "{ a }", "variables": {"c": "\\ud800"}}`, 1, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, batch, herr := decodeBody([]byte(tt.body), 3)
			if tt.code != "" {
				if herr == nil || herr.code != tt.code || herr.status != http.StatusBadRequest {
					t.Fatalf("got %v, want %s", herr, tt.code)
				}
				return
			}
			if herr != nil {
				t.Fatalf("refused: %v", herr)
			}
			if len(ps) != tt.n || batch != tt.batch {
				t.Fatalf("%d requests (batch %v), want %d (%v)", len(ps), batch, tt.n, tt.batch)
			}
		})
	}
}

// FuzzDecodeBody: whatever the body, decodeBody returns requests or a 400
// with a code and a short message that does not quote the body.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{`{"query": "{ a }"}`, `[{"query": "{ a }"}, {"query": "{ b }", "variables": {"x": [1, {"y": null}]}}]`,
		`{"query": "q", "operationName": "o", "variables": {"s": "\ud83d\ude00 \u0000 \"x\""}, "extensions": {"e": 1.5e3}}`,
		`{"query": "\ud800"}`, "{\"query\": \"\xff\"}", `[[[[`, `{"query": 5}`, `"x"`, ``, `{"extensions": {}}`, `{"query": "a"} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ps, _, herr := decodeBody(body, 5)
		if herr != nil {
			if herr.status != http.StatusBadRequest || (herr.code != CodeBadRequest && herr.code != weibo.CodeBadUserInput) {
				t.Fatalf("status %d code %q", herr.status, herr.code)
			}
			if len(herr.message) > 200 {
				t.Fatalf("message of %d bytes: %q", len(herr.message), herr.message)
			}
			if len(body) >= 16 && strings.Contains(herr.message, string(body[:16])) {
				t.Fatalf("message %q quotes the body", herr.message)
			}
			return
		}
		if len(ps) == 0 || len(ps) > 5 {
			t.Fatalf("%d requests", len(ps))
		}
		for _, p := range ps {
			if !utf8.ValidString(p.Query) || !utf8.ValidString(p.OperationName) {
				t.Fatalf("invalid UTF-8 decoded: %q", p.Query)
			}
			if strings.ContainsRune(p.Query, utf8.RuneError) && !strings.Contains(string(body), "\uFFFD") && !strings.Contains(strings.ToLower(string(body)), `\ufffd`) {
				t.Fatalf("a replacement character appeared in %q", p.Query)
			}
		}
	})
}
