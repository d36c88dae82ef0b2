package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// multipartBody builds a request body of the GraphQL multipart request
// spec: operations, map, then one file part per entry of files (part name
// -> bytes), in the order of names.
func multipartBody(t testing.TB, operations, fileMap string, names []string, files map[string][]byte) (body []byte, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("operations", operations)
	_ = mw.WriteField("map", fileMap)
	for _, n := range names {
		fw, err := mw.CreateFormFile(n, n+".jpg")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(files[n])
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// postMultipart sends body to /graphql with contentType and header pairs;
// chunked sends it without a Content-Length.
func (g *gw) postMultipart(body []byte, contentType string, chunked bool, header ...string) rawResponse {
	g.t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // not a known length: sent chunked
	}
	req, _ := http.NewRequest("POST", g.url+"/graphql", rd)
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestMultipartTransport: the multipart request spec's framing, the header
// that forces a CORS preflight, the upload body's own limit, and 415 for
// other bodies unchanged.
func TestMultipartTransport(t *testing.T) {
	const maxUpload = 64 << 10
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.MaxUploadBytes = maxUpload })
	ops := `{"query": "{ __typename }", "variables": {"file": null}}`
	small, ct := multipartBody(t, ops, `{"0": ["variables.file"]}`, []string{"0"}, map[string][]byte{"0": []byte("\xff\xd8\xff a small file")})
	big, bigCT := multipartBody(t, ops, `{"0": ["variables.file"]}`, []string{"0"}, map[string][]byte{"0": bytes.Repeat([]byte("x"), maxUpload+1)})
	twoFiles, twoCT := multipartBody(t, ops, `{"0": ["variables.file"]}`, []string{"0", "1"}, map[string][]byte{"0": []byte("a"), "1": []byte("b")})
	missing, missingCT := multipartBody(t, ops, `{"0": ["variables.file"], "1": ["variables.other"]}`, []string{"0"}, map[string][]byte{"0": []byte("a")})
	noOps, noOpsCT := multipartBody(t, `{"query": "{ __typename }"`, `{}`, nil, nil)
	preflight := []string{"Apollo-Require-Preflight", "true"}
	tests := []struct {
		name    string
		body    []byte
		ct      string
		chunked bool
		header  []string
		status  int
		code    string // "" = success
	}{
		{"with Apollo-Require-Preflight", small, ct, false, preflight, 200, ""},
		{"with an empty Apollo-Require-Preflight", small, ct, false, []string{"Apollo-Require-Preflight", ""}, 200, ""},
		{"with X-Apollo-Operation-Name", small, ct, false, []string{"X-Apollo-Operation-Name", "Upload"}, 200, ""},
		{"chunked", small, ct, true, preflight, 200, ""},
		{"no preflight header", small, ct, false, nil, 400, "BAD_REQUEST"},
		{"an empty X-Apollo-Operation-Name", small, ct, false, []string{"X-Apollo-Operation-Name", " "}, 400, "BAD_REQUEST"},
		{"over --max-upload-bytes", big, bigCT, false, preflight, 413, "PAYLOAD_TOO_LARGE"},
		{"over --max-upload-bytes, chunked", big, bigCT, true, preflight, 413, "PAYLOAD_TOO_LARGE"},
		{"a file the map does not name", twoFiles, twoCT, false, preflight, 400, "BAD_REQUEST"},
		{"a file the map names missing", missing, missingCT, false, preflight, 400, "BAD_REQUEST"},
		{"operations not JSON", noOps, noOpsCT, false, preflight, 400, "BAD_REQUEST"},
		{"no boundary", small, "multipart/form-data", false, preflight, 400, "BAD_REQUEST"},
		{"text/plain is still 415", []byte(`{"query": "{ __typename }"}`), "text/plain", false, preflight, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"a urlencoded form is still 415", []byte("query=%7B__typename%7D"), "application/x-www-form-urlencoded", false, preflight, 415, "UNSUPPORTED_MEDIA_TYPE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := g.in(t).postMultipart(tt.body, tt.ct, tt.chunked, tt.header...)
			if r.status != tt.status {
				t.Errorf("HTTP %d, want %d: %s", r.status, tt.status, r.body)
			}
			var out errorBody
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, r.body)
			}
			if tt.code == "" {
				if len(out.Errors) > 0 || !strings.Contains(string(out.Data), "__typename") {
					t.Errorf("want data: %s", r.body)
				}
				return
			}
			if len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != tt.code {
				t.Errorf("want code %s: %s", tt.code, r.body)
			}
		})
	}
}

// TestUploadPreflight: a browser page on an allowed origin gets the
// preflight of an upload (its Apollo-Require-Preflight or
// X-Apollo-Operation-Name header) answered, so it can send the upload that
// a page on another origin cannot.
func TestUploadPreflight(t *testing.T) {
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.CORSOrigins = corsOrigins })
	for _, h := range []string{"apollo-require-preflight,authorization", "authorization,x-apollo-operation-name"} {
		for origin, allowed := range map[string]bool{"https://app.example.com": true, "https://evil.example": false} {
			r := g.get("OPTIONS", "/graphql", "Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", h)
			if got := r.header.Get("Access-Control-Allow-Headers"); (got == h) != allowed {
				t.Errorf("%s asking for %s: Access-Control-Allow-Headers %q (allowed: %v)", origin, h, got, allowed)
			}
		}
	}
}
