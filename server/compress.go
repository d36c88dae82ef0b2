package server

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5/middleware"
)

// compressedTypes are the response media types gzip (or deflate)
// compresses: GraphQL responses and GraphiQL's page and assets. Not
// multipart/mixed (incremental delivery) nor text/event-stream, whose parts
// must reach the client as they are written, nor /metrics' text (promhttp
// compresses it itself).
var compressedTypes = []string{
	"application/json", "application/graphql-response+json",
	"text/html", "text/css", "application/javascript", "text/javascript",
}

var gzipper = middleware.Compress(5, compressedTypes...)

// compress compresses responses of compressedTypes when the client's
// Accept-Encoding allows gzip or deflate (chi's middleware.Compress); a
// WebSocket upgrade is passed on untouched.
func compress(next http.Handler) http.Handler {
	z := gzipper(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			next.ServeHTTP(w, r)
			return
		}
		z.ServeHTTP(w, r)
	})
}
