package admin_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

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
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tc.contentType)
			}
			if !strings.Contains(rec.Body.String(), tc.body) {
				t.Errorf("body does not contain %q", tc.body)
			}
			if tc.path == "/admin/" && strings.Contains(rec.Body.String(), "<base") {
				t.Errorf("the page at /admin/ has a base element")
			}
			etag := rec.Header().Get("ETag")
			if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
				t.Fatalf("ETag %q, Cache-Control %q", etag, rec.Header().Get("Cache-Control"))
			}
			csp := rec.Header().Get("Content-Security-Policy")
			if page := strings.HasPrefix(tc.contentType, "text/html"); page != strings.Contains(csp, "default-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
			req := httptest.NewRequest(tc.method, tc.path, nil)
			req.Header.Set("If-None-Match", etag)
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusNotModified {
				t.Errorf("revalidation with the ETag: status %d, want 304", rec.Code)
			}
		})
	}
}

// TestNoOtherOrigin: the embedded page loads its assets by relative URLs,
// every one of which is embedded, and no embedded file names a CDN or a
// web font.
func TestNoOtherOrigin(t *testing.T) {
	files := admin.Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html references %d files", len(refs))
	}
	for _, m := range refs {
		if m[1] == "data:," {
			continue // the empty favicon: no request at all
		}
		if !strings.HasPrefix(m[1], admin.AssetsPrefix) {
			t.Errorf("index.html loads %q, not a relative URL under %s", m[1], admin.AssetsPrefix)
		} else if _, err := fs.Stat(files, m[1]); err != nil {
			t.Errorf("index.html loads %q, which is not embedded", m[1])
		}
	}
	cdn := regexp.MustCompile(`(?i)(unpkg\.com|jsdelivr\.net|cdnjs|esm\.sh|googleapis\.com|gstatic\.com|skypack|@font-face)`)
	n := 0
	err = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		f, err := files.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		if m := cdn.Find(b); m != nil {
			t.Errorf("%s names %s", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("%d embedded files: the bundle is missing (make admin-console)", n)
	}
}
