// Package admin serves the admin console from the gateway's binary: a React
// page (MUI components, react-arborist's tree) built from npm packages in
// _web/ (package.json, package-lock.json, build.mjs; `make admin-console`
// runs npm ci and the esbuild bundle) into dist/, which is committed and
// embedded here, so that building and running the gateway needs only Go and
// the page loads nothing from another origin.
//
// The console uses only the gateway's public GraphQL API, at ../graphql
// relative to the page, with the token of the login mutation. The page is
// served at /admin/ and at /admin; there it carries <base href="admin/">,
// so that its relative URLs (assets/…, ../graphql) mean the same at both,
// also behind a path prefix. The gateway mounts Handler at /admin and
// /admin/*.
package admin

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"
)

//go:embed dist
var dist embed.FS

// Path is where the console is served; its assets are under
// Path + "/" + AssetsPrefix.
const Path = "/admin"

// AssetsPrefix is the folder of the page's script and styles, relative to
// the page.
const AssetsPrefix = "assets/"

// contentSecurityPolicy allows the page only its own origin: its script,
// styles (MUI's emotion inserts style elements), and fetch to the gateway.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'self'; form-action 'self'; " +
	"frame-ancestors 'self'"

// Files returns the embedded site: index.html and assets/*.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded: cannot happen
	}
	return sub
}

// file is a response body with its strong ETag (a SHA-256): embedded files
// carry no modification time, so the ETag is what lets a browser revalidate
// the bundle with a 304 instead of loading it again.
type file struct {
	body []byte
	etag string
}

func newFile(b []byte) file {
	sum := sha256.Sum256(b)
	return file{body: b, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
}

// pageWithoutSlash is the page as served at /admin: relative URLs resolve
// against /admin/ through the base element.
const pageWithoutSlash = "\x00"

// site maps the request path below Path ("/", "/assets/<file>", or
// pageWithoutSlash) to what is served there.
var site = sync.OnceValue(func() map[string]file {
	m := map[string]file{}
	_ = fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Files(), p)
		if err != nil {
			return err
		}
		if p == "index.html" {
			m["/"] = newFile(b)
			m[pageWithoutSlash] = newFile(bytes.Replace(b, []byte("<head>"), []byte(`<head><base href="admin/">`), 1))
			return nil
		}
		m["/"+p] = newFile(b)
		return nil
	})
	return m
})

// Handler serves GET and HEAD of the page at /admin and /admin/ and of its
// assets at /admin/assets/<file>, with ETags, "Cache-Control: no-cache"
// (revalidate on every load) and a Content-Security-Policy that keeps the
// page to its own origin. Other paths are 404, other methods 405.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, Path)
		switch {
		case !ok:
			http.NotFound(w, r)
			return
		case rest == "":
			rest = pageWithoutSlash
		case rest == "/":
		case !strings.HasPrefix(rest, "/"+AssetsPrefix):
			http.NotFound(w, r)
			return
		}
		f, ok := site()[rest]
		if !ok {
			http.NotFound(w, r)
			return
		}
		name := rest
		h := w.Header()
		if rest == "/" || rest == pageWithoutSlash {
			name = "index.html"
			h.Set("Content-Security-Policy", contentSecurityPolicy)
		}
		h.Set("ETag", f.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}
