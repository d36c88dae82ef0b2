package admin_test

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/pagetest"
	"github.com/weibohbase/gateway/server/admin"
)

// TestHandler: the page at /admin and /admin/ (with a base element at
// /admin, so that its relative URLs resolve alike), its assets under
// /admin/assets/, 404 for the rest, 405 for methods other than GET and HEAD,
// ETag revalidation, and the Content-Security-Policy on the page.
func TestHandler(t *testing.T) {
	h := admin.Handler()
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string // prefix
		body         string // substring
	}{
		{"GET", "/admin", 200, "text/html", `<base href="admin/">`},
		{"GET", "/admin/", 200, "text/html", `src="assets/admin.js"`},
		{"HEAD", "/admin/", 200, "text/html", ""},
		{"GET", "/admin/assets/admin.js", 200, "text/javascript", "moveDepartment"},
		{"GET", "/admin/assets/admin.css", 200, "text/css", ".dept-row"},
		{"GET", "/admin/assets/", 404, "", ""},
		{"GET", "/admin/assets/nosuch.js", 404, "", ""},
		{"GET", "/admin/assets/../index.html", 404, "", ""},
		{"GET", "/admin/index.html", 404, "", ""},
		{"GET", "/admin/elsewhere", 404, "", ""},
		{"GET", "/administrator", 404, "", ""},
		{"GET", "/", 404, "", ""},
		{"POST", "/admin/", 405, "", ""},
	} {
		c := pagetest.Case{Method: tc.method, Path: tc.path, Status: tc.status, ContentType: tc.contentType, Body: tc.body}
		pagetest.Check(t, h, c, func(t *testing.T, rec *httptest.ResponseRecorder) {
			if tc.path == "/admin/" && strings.Contains(rec.Body.String(), "<base") {
				t.Errorf("the page at /admin/ has a base element")
			}
			csp := rec.Header().Get("Content-Security-Policy")
			if page := strings.HasPrefix(tc.contentType, "text/html"); page != strings.Contains(csp, "default-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
}

// TestNoOtherOrigin: the embedded page loads its assets by relative URLs,
// every one of which is embedded, and no embedded file names a CDN or a
// web font.
func TestNoOtherOrigin(t *testing.T) {
	pagetest.SelfContained(t, admin.Files(), admin.AssetsPrefix, regexp.MustCompile(`(?i)(`+pagetest.CDNs+`|@font-face)`), 3, "make admin-console")
}
