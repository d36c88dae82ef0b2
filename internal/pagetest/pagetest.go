// Package pagetest checks the handlers of the gateway's embedded pages
// (GraphiQL, the admin console) without a browser: what each path
// answers, ETag revalidation, and that the page needs nothing but its own
// embedded files. The browser tests are in internal/browsertest.
package pagetest

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Case is one request to a page handler and what it must answer.
type Case struct {
	Method, Path string
	// Status is the HTTP status to answer.
	Status int
	// ContentType is a prefix of the Content-Type of a 200 answer.
	ContentType string
	// Body is a substring of a 200 answer's body ("" for any).
	Body string
}

// Check sends c to h as a subtest named "METHOD path": the status; for a
// 200, the Content-Type, the body, an ETag with Cache-Control no-cache, then
// page (when not nil) for the page's own checks, and a revalidation with
// the ETag answered 304.
func Check(t *testing.T, h http.Handler, c Case, page func(t *testing.T, rec *httptest.ResponseRecorder)) {
	t.Run(c.Method+" "+c.Path, func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.Method, c.Path, nil))
		if rec.Code != c.Status {
			t.Fatalf("status %d, want %d", rec.Code, c.Status)
		}
		if c.Status != http.StatusOK {
			return
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, c.ContentType) {
			t.Errorf("Content-Type %q, want %s", ct, c.ContentType)
		}
		if !strings.Contains(rec.Body.String(), c.Body) {
			t.Errorf("body does not contain %q", c.Body)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Fatalf("ETag %q, Cache-Control %q", etag, rec.Header().Get("Cache-Control"))
		}
		if page != nil {
			page(t, rec)
		}
		req := httptest.NewRequest(c.Method, c.Path, nil)
		req.Header.Set("If-None-Match", etag)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("revalidation with the ETag: status %d, want 304", rec.Code)
		}
	})
}

// CDNs matches the hosts of the usual CDNs and font services (case
// insensitive).
const CDNs = `unpkg\.com|jsdelivr\.net|cdnjs|esm\.sh|googleapis\.com|gstatic\.com|skypack`

// SelfContained checks that files' index.html loads its assets by
// relative URLs under prefix, every one of which is in files (a data: URL,
// which is no request, is passed over), that no file of files matches
// forbidden, and that files holds at least minFiles files (fewer: the
// bundle is missing; build names the command that builds it).
func SelfContained(t *testing.T, files fs.FS, prefix string, forbidden *regexp.Regexp, minFiles int, build string) {
	t.Helper()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html references %d files", len(refs))
	}
	for _, m := range refs {
		if strings.HasPrefix(m[1], "data:") {
			continue
		}
		if !strings.HasPrefix(m[1], prefix) {
			t.Errorf("index.html loads %q, not a relative URL under %s", m[1], prefix)
		} else if _, err := fs.Stat(files, m[1]); err != nil {
			t.Errorf("index.html loads %q, which is not embedded", m[1])
		}
	}
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
		if m := forbidden.Find(b); m != nil {
			t.Errorf("%s names %s", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < minFiles {
		t.Fatalf("%d embedded files: the bundle is missing (%s)", n, build)
	}
}
