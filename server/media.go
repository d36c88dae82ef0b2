package server

import (
	"bytes"
	"container/list"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/weibo"
)

// MediaBlob is the stored bytes of one variant of a picture.
type MediaBlob struct {
	// Data is the encoded picture.
	Data []byte
	// MIME is its media type as stored (image/jpeg, image/png, image/gif,
	// image/webp).
	MIME string
	// Hash is the SHA-256 of Data: the variant's content address and its
	// ETag.
	Hash [32]byte
}

// MediaSource reads the variants GET /media/<id>/<variant> serves.
type MediaSource interface {
	// MediaVariant returns variant ("THUMB", "MIDDLE" or "LARGE") of the
	// media whose GraphQL id is id ("media:<n>"). Its error is a
	// *weibo.Error of code NOT_FOUND for an unknown or malformed id, an
	// unknown variant, a picture of a deleted post or an upload never
	// attached and expired; UNAVAILABLE when the store is away.
	MediaVariant(ctx context.Context, id, variant string) (*MediaBlob, error)
}

// Media is the pictures as the server uses them: what the resolvers call
// (resolvers.Media: upload, alt text, the pictures of posts, publishing
// with pictures) and what GET /media/<id>/<variant> reads.
type Media interface {
	resolvers.Media
	MediaSource
}

// Defaults of the media handler's cache.
const (
	// DefaultMediaCacheBytes bounds the bytes of hot variants kept in
	// memory: a few thousand thumbnails.
	DefaultMediaCacheBytes = 32 << 20
	// DefaultMediaCacheTTL is how long a cached variant is served without
	// asking the store again: so long a picture of a deleted post may still
	// be served by this gateway (browsers keep it a year: immutable).
	DefaultMediaCacheTTL = time.Minute
	// mediaCacheMaxItem bounds one cached variant: large variants of a few
	// MB would push out hundreds of thumbnails.
	mediaCacheMaxItem = 1 << 20
)

// mediaHandler serves GET and HEAD /media/{id}/{variant}: the variant's
// bytes with Content-Type from the stored type, X-Content-Type-Options:
// nosniff, Content-Security-Policy: sandbox (an image opened as a document
// runs nothing), a strong ETag (the content hash, quoted hex) with 304 on
// If-None-Match, Cache-Control immutable for a year (a variant's bytes never
// change under its URL), Range requests (206) and HEAD (http.ServeContent).
// Unknown ids or variants and refused media are 404; a store away is 503.
type mediaHandler struct {
	src   MediaSource
	cache *mediaCache
	log   *slog.Logger
}

// mediaVariants are the variants' path segments, lower case, and the
// MediaVariant enum values they name.
var mediaVariants = map[string]string{"thumb": "THUMB", "middle": "MIDDLE", "large": "LARGE"}

func (h *mediaHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, seg := chi.URLParam(r, "id"), chi.URLParam(r, "variant")
	variant, ok := mediaVariants[seg]
	if !ok || id == "" {
		http.NotFound(w, r)
		return
	}
	key := id + "/" + variant
	b := h.cache.get(key)
	if b == nil {
		var err error
		b, err = h.src.MediaVariant(r.Context(), id, variant)
		var werr *weibo.Error
		switch {
		case errors.As(err, &werr) && (werr.Code == weibo.CodeNotFound || werr.Code == weibo.CodeBadUserInput):
			http.NotFound(w, r)
			return
		case errors.As(err, &werr) && werr.Code == weibo.CodeUnavailable,
			errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the store is unavailable: retry", http.StatusServiceUnavailable)
			return
		case err != nil:
			h.log.ErrorContext(r.Context(), "media read", "err", err, "request_id", middleware.GetReqID(r.Context()))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		case b == nil:
			http.NotFound(w, r)
			return
		}
		h.cache.put(key, b)
	}
	hd := w.Header()
	hd.Set("Content-Type", b.MIME)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "sandbox")
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("ETag", `"`+hex.EncodeToString(b.Hash[:])+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b.Data))
}

// mediaCache is a least-recently-used cache of variants bounded in bytes,
// each entry served for at most ttl.
type mediaCache struct {
	mu       sync.Mutex
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time
	bytes    int64
	order    *list.List // front: most recently used; of *mediaEntry
	entries  map[string]*list.Element
}

type mediaEntry struct {
	key     string
	blob    *MediaBlob
	expires time.Time
}

// newMediaCache returns a cache of at most maxBytes (<= 0: no cache).
func newMediaCache(maxBytes int64, ttl time.Duration, now func() time.Time) *mediaCache {
	return &mediaCache{maxBytes: maxBytes, ttl: ttl, now: now, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *mediaCache) get(key string) *MediaBlob {
	if c == nil || c.maxBytes <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	e := el.Value.(*mediaEntry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil
	}
	c.order.MoveToFront(el)
	return e.blob
}

func (c *mediaCache) put(key string, b *MediaBlob) {
	size := int64(len(b.Data))
	if c == nil || c.maxBytes <= 0 || size > min(c.maxBytes, mediaCacheMaxItem) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.entries[key] = c.order.PushFront(&mediaEntry{key: key, blob: b, expires: c.now().Add(c.ttl)})
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *mediaCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*mediaEntry)
	delete(c.entries, e.key)
	c.bytes -= int64(len(e.blob.Data))
}
