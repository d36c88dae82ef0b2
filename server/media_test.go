package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/resolvers/mediamodel"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// standInMedia is a source of pictures whose bytes and failures the test
// sets (server.Media over maps), for the handler's HTTP rules (headers,
// ETag, Range, the cache, a store away) and the GraphQL layer's wiring;
// the real processing and store behind the same paths are
// TestMediaEndToEnd's and the client tests', their own rules (formats,
// variants, attach rules, expiry, deleted posts) their packages' tests'. Uploads keep the file's bytes as
// every variant, sized 1 × 1. reads counts MediaVariant calls, gets Get
// calls.
type standInMedia struct {
	feed    *feed.Service
	mu      sync.Mutex
	blobs   map[string]*server.MediaBlob // "<id>/<VARIANT>"
	media   map[string]*mediamodel.Media
	posts   map[weibo.PostID][]string
	next    int
	reads   atomic.Int64
	gets    atomic.Int64
	failing atomic.Bool // every read UNAVAILABLE
}

func newStandInMedia(f *feed.Service) *standInMedia {
	return &standInMedia{feed: f, blobs: map[string]*server.MediaBlob{}, media: map[string]*mediamodel.Media{},
		posts: map[weibo.PostID][]string{}}
}

func (s *standInMedia) MediaVariant(_ context.Context, id, variant string) (*server.MediaBlob, error) {
	s.reads.Add(1)
	if s.failing.Load() {
		return nil, &weibo.Error{Code: weibo.CodeUnavailable, Message: "the store is away"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[id+"/"+variant]
	if !ok {
		return nil, weibo.NotFound("no media %s", id)
	}
	return b, nil
}

func (s *standInMedia) Upload(_ context.Context, owner weibo.UserID, data []byte, alt *string) (*mediamodel.Media, error) {
	s.mu.Lock()
	s.next++
	id := "media:" + strconv.Itoa(s.next)
	s.mu.Unlock()
	for _, v := range []string{"THUMB", "MIDDLE", "LARGE"} {
		s.put(id, v, "image/jpeg", data)
	}
	m := &mediamodel.Media{ID: id, Owner: owner, Alt: alt, Width: 1, Height: 1, Blurhash: "LEHV6nWB2yk8", MIMEType: "image/jpeg", Bytes: int64(len(data))}
	s.mu.Lock()
	s.media[id] = m
	s.mu.Unlock()
	return m, nil
}

func (s *standInMedia) UpdateAlt(_ context.Context, viewer weibo.UserID, id string, alt *string) (*mediamodel.Media, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.media[id]
	switch {
	case !ok:
		return nil, weibo.NotFoundOn("id", "no such picture")
	case m.Owner != viewer:
		return nil, weibo.Forbidden("another user's picture")
	}
	c := *m
	c.Alt = alt
	s.media[id] = &c
	return &c, nil
}

func (s *standInMedia) Get(_ context.Context, ids []string) ([]*mediamodel.Media, error) {
	s.gets.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*mediamodel.Media, len(ids))
	for i, id := range ids {
		out[i] = s.media[id]
	}
	return out, nil
}

func (s *standInMedia) OfPost(p *feed.Post) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts[p.ID]
}

func (s *standInMedia) Publish(ctx context.Context, author weibo.UserID, content string, ids []string) (*feed.Post, error) {
	s.mu.Lock()
	for _, id := range ids {
		if m, ok := s.media[id]; !ok || m.Owner != author {
			s.mu.Unlock()
			return nil, weibo.BadInput("mediaIds", "not a picture of yours: %s", id)
		}
	}
	s.mu.Unlock()
	p, err := s.feed.Publish(ctx, author, content)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.posts[p.ID] = ids
	s.mu.Unlock()
	return p, nil
}

func (s *standInMedia) put(id, variant, mime string, data []byte) *server.MediaBlob {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &server.MediaBlob{Data: data, MIME: mime, Hash: sha256.Sum256(data)}
	s.blobs[id+"/"+variant] = b
	return b
}

func (s *standInMedia) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.blobs {
		if strings.HasPrefix(k, id+"/") {
			delete(s.blobs, k)
		}
	}
}

// startMediaGateway serves the gateway on the embedded store with a
// stand-in media service; configure, when not nil, changes the Config.
func startMediaGateway(t *testing.T, configure func(*server.Config)) (*gw, *standInMedia) {
	t.Helper()
	return startMediaGatewayOn(t, testenv.Embedded(t), configure)
}

// startMediaGatewayOn is startMediaGateway on st.
func startMediaGatewayOn(t *testing.T, st hbase.StoreAdmin, configure func(*server.Config)) (*gw, *standInMedia) {
	t.Helper()
	var src *standInMedia
	g := startGatewayWith(t, st, func(c *server.Config) {
		src = newStandInMedia(c.Svc.Feed)
		c.Media = src
		if configure != nil {
			configure(c)
		}
	})
	return g, src
}

// get sends method to path with header pairs and returns the answer.
func (g *gw) get(method, path string, header ...string) rawResponse {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.url+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestMediaServing: the headers, ETag and 304, Range, HEAD and 404s of
// GET /media/<id>/<variant>, on the embedded backend.
func TestMediaServing(t *testing.T) {
	g, src := startMediaGateway(t, nil)
	thumb := src.put("media:1", "THUMB", "image/jpeg", []byte("\xff\xd8\xff\xe0 a thumbnail's bytes \xff\xd9"))
	src.put("media:1", "LARGE", "image/png", []byte("\x89PNG\r\n\x1a\n a large picture"))
	etag := `"` + hex.EncodeToString(thumb.Hash[:]) + `"`

	r := g.get("GET", "/media/media:1/thumb", "Accept-Encoding", "gzip")
	if r.status != 200 || string(r.body) != string(thumb.Data) {
		t.Fatalf("GET: HTTP %d, %q", r.status, r.body)
	}
	for h, want := range map[string]string{
		"Content-Type":            "image/jpeg",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "sandbox",
		"Cache-Control":           "public, max-age=31536000, immutable",
		"ETag":                    etag,
		"Accept-Ranges":           "bytes",
		"Content-Encoding":        "",
		"X-Request-Id":            r.header.Get("X-Request-Id"), // the router's middleware ran
	} {
		if got := r.header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if r.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id: not served through the router's middleware")
	}
	if got := g.get("GET", "/media/media:1/large").header.Get("Content-Type"); got != "image/png" {
		t.Errorf("LARGE Content-Type %q, want the stored image/png", got)
	}

	t.Run("If-None-Match", func(t *testing.T) {
		r := g.in(t).get("GET", "/media/media:1/thumb", "If-None-Match", etag)
		if r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("HTTP %d with %d bytes, want 304 and none", r.status, len(r.body))
		}
		if r := g.in(t).get("GET", "/media/media:1/thumb", "If-None-Match", `"0000"`); r.status != 200 {
			t.Errorf("another ETag: HTTP %d, want 200", r.status)
		}
	})
	t.Run("Range", func(t *testing.T) {
		r := g.in(t).get("GET", "/media/media:1/thumb", "Range", "bytes=2-5")
		if r.status != http.StatusPartialContent || string(r.body) != string(thumb.Data[2:6]) {
			t.Errorf("HTTP %d, %q, want 206 and %q", r.status, r.body, thumb.Data[2:6])
		}
		want := "bytes 2-5/" + strconv.Itoa(len(thumb.Data))
		if got := r.header.Get("Content-Range"); got != want {
			t.Errorf("Content-Range %q, want %q", got, want)
		}
		if r := g.in(t).get("GET", "/media/media:1/thumb", "Range", "bytes=9999-"); r.status != http.StatusRequestedRangeNotSatisfiable {
			t.Errorf("a range past the end: HTTP %d, want 416", r.status)
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		r := g.in(t).get("HEAD", "/media/media:1/thumb")
		if r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Length") != strconv.Itoa(len(thumb.Data)) || r.header.Get("ETag") != etag {
			t.Errorf("HTTP %d, %d bytes, Content-Length %q, ETag %q", r.status, len(r.body), r.header.Get("Content-Length"), r.header.Get("ETag"))
		}
	})
	t.Run("404", func(t *testing.T) {
		for _, p := range []string{"/media/media:2/thumb", "/media/media:1/middle", "/media/media:1/huge", "/media/media:1/THUMB", "/media/media:1", "/media/"} {
			if r := g.in(t).get("GET", p); r.status != http.StatusNotFound {
				t.Errorf("GET %s: HTTP %d, want 404", p, r.status)
			}
		}
	})
	t.Run("store away", func(t *testing.T) {
		src.failing.Store(true)
		defer src.failing.Store(false)
		if r := g.in(t).get("GET", "/media/media:1/middle"); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("HTTP %d, Retry-After %q, want 503 with one", r.status, r.header.Get("Retry-After"))
		}
	})
	t.Run("POST", func(t *testing.T) {
		if r := g.in(t).get("POST", "/media/media:1/thumb"); r.status != http.StatusMethodNotAllowed {
			t.Errorf("HTTP %d, want 405", r.status)
		}
	})
}

// TestMediaCache: a hot variant is read from the store once, a variant
// over the cache's bytes is not kept, and the cache's byte bound evicts the
// least recently used.
func TestMediaCache(t *testing.T) {
	g, src := startMediaGateway(t, func(c *server.Config) { c.MediaCacheBytes = 100 })
	src.put("media:1", "THUMB", "image/jpeg", []byte(strings.Repeat("a", 60)))
	src.put("media:2", "THUMB", "image/jpeg", []byte(strings.Repeat("b", 60)))
	src.put("media:3", "THUMB", "image/jpeg", []byte(strings.Repeat("c", 101)))
	reads := func(path string, n int) int64 {
		before := src.reads.Load()
		for range n {
			if r := g.get("GET", path); r.status != 200 {
				t.Fatalf("GET %s: HTTP %d", path, r.status)
			}
		}
		return src.reads.Load() - before
	}
	if n := reads("/media/media:1/thumb", 5); n != 1 {
		t.Errorf("a hot variant read %d times from the store for 5 requests, want 1", n)
	}
	if n := reads("/media/media:3/thumb", 3); n != 3 {
		t.Errorf("a variant over the cache's bytes read %d times for 3 requests, want 3", n)
	}
	if n := reads("/media/media:2/thumb", 1) + reads("/media/media:1/thumb", 1); n != 2 {
		t.Errorf("two variants of 60 bytes in a cache of 100: %d store reads, want 2 (the first evicted)", n)
	}
	src.remove("media:2")
	if r := g.get("GET", "/media/media:2/thumb"); r.status != http.StatusNotFound {
		t.Errorf("a variant evicted then removed: HTTP %d, want 404", r.status)
	}
}
