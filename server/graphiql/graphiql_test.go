package graphiql_test

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/pagetest"
	"github.com/weibohbase/gateway/server/graphiql"
)

// TestHandler: the page at /, its assets under /graphiql/, 404 for the rest,
// 405 for methods other than GET and HEAD, ETag revalidation, and the
// Content-Security-Policy on the page.
func TestHandler(t *testing.T) {
	h := graphiql.Handler()
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string // prefix
		body         string // substring
	}{
		{"GET", "/", 200, "text/html", `src="graphiql/graphiql.js"`},
		{"HEAD", "/", 200, "text/html", ""},
		{"GET", "/graphiql/graphiql.js", 200, "text/javascript", "graphql-transport-ws"},
		{"GET", "/graphiql/graphiql.css", 200, "text/css", ".graphiql-container"},
		{"GET", "/graphiql/editor.worker.js", 200, "text/javascript", ""},
		{"GET", "/graphiql/json.worker.js", 200, "text/javascript", ""},
		{"GET", "/graphiql/graphql.worker.js", 200, "text/javascript", ""},
		{"GET", "/graphiql/", 404, "", ""},
		{"GET", "/graphiql/nosuch.js", 404, "", ""},
		{"GET", "/graphiql/../index.html", 404, "", ""},
		{"GET", "/index.html", 404, "", ""},
		{"GET", "/elsewhere", 404, "", ""},
		{"POST", "/", 405, "", ""},
	} {
		c := pagetest.Case{Method: tc.method, Path: tc.path, Status: tc.status, ContentType: tc.contentType, Body: tc.body}
		pagetest.Check(t, h, c, func(t *testing.T, rec *httptest.ResponseRecorder) {
			if tc.path == "/" && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("Content-Security-Policy %q", rec.Header().Get("Content-Security-Policy"))
			}
		})
	}
}

// TestNoOtherOrigin: the embedded page loads its assets by relative URLs,
// every one of which is embedded, and no embedded file names a CDN.
func TestNoOtherOrigin(t *testing.T) {
	pagetest.SelfContained(t, graphiql.Files(), graphiql.AssetsPrefix, regexp.MustCompile(`(?i)(`+pagetest.CDNs+`)`), 5, "make graphiql")
}
