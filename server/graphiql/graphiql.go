// Package graphiql serves GraphiQL (with the sign-in and explorer plugins) from the
// gateway's binary: the page and its assets are built from npm packages in
// _web/ (package.json, package-lock.json, build.mjs; `make graphiql` runs
// npm ci and the esbuild bundle) into dist/, which is committed and embedded
// here, so that building and running the gateway needs only Go and the page
// loads nothing from another origin.
//
// The page uses URLs relative to itself: GraphQL at graphql (HTTP POST, and
// WebSocket with the graphql-ws protocol for subscriptions, the Headers tab's
// object being the connection_init payload) and its assets under graphiql/.
// The sign-in plugin runs login, me and logout at the same endpoint and, while
// signed in, sends the token as Authorization on every request and in the
// connection_init payload.
// The gateway mounts Handler at / and /graphiql/*.
package graphiql

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

//go:embed dist
var dist embed.FS

// AssetsPrefix is the path under which the page's scripts, styles, workers
// and font are served, relative to the page.
const AssetsPrefix = "graphiql/"

// contentSecurityPolicy allows the page only its own origin: scripts,
// workers, styles (Monaco also sets inline styles), the font, and fetch and
// WebSocket connections to the gateway.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; worker-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
	"connect-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'"

// Files returns the embedded site: index.html and graphiql/*.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded: cannot happen
	}
	return sub
}

// etags maps each embedded file's path to a strong ETag (its SHA-256):
// embedded files carry no modification time, so this is what lets a browser
// revalidate the 5 MiB bundle with a 304 instead of loading it again.
var etags = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	_ = fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Files(), p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[p] = `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
		return nil
	})
	return m
})

// Handler serves GET and HEAD of the page at "/" and of its assets at
// "/graphiql/<file>", with ETags, "Cache-Control: no-cache" (revalidate on
// every load) and a Content-Security-Policy that keeps the page to its own
// origin. Other paths are 404, other methods 405.
func Handler() http.Handler {
	files := http.FileServerFS(Files())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		switch {
		case name == "":
			name = "index.html"
		case !strings.HasPrefix(name, AssetsPrefix) || strings.HasSuffix(name, "/"):
			http.NotFound(w, r)
			return
		}
		tag, ok := etags()[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("ETag", tag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		if name == "index.html" {
			h.Set("Content-Security-Policy", contentSecurityPolicy)
			http.ServeFileFS(w, r, Files(), name)
			return
		}
		files.ServeHTTP(w, r)
	})
}
