package resolvers

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/resolvers/mediamodel"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// Media is what the resolvers call of the pictures: their processing
// (weibo/media/process) and their store (weibo/media) behind GraphQL ids
// ("media:<n>"). Errors are *weibo.Error: BAD_USER_INPUT (field "id" for a
// malformed id, "file" for a format not accepted, "mediaIds" for an attach
// refused), PAYLOAD_TOO_LARGE, FORBIDDEN, NOT_FOUND; or the store's.
type Media interface {
	// Upload processes data, a file's bytes (at most MaxUploadFileBytes),
	// and stores the picture as owner's, not yet attached.
	Upload(ctx context.Context, owner weibo.UserID, data []byte, alt *string) (*mediamodel.Media, error)
	// UpdateAlt sets (nil: clears) the alt text of viewer's picture id not
	// yet attached.
	UpdateAlt(ctx context.Context, viewer weibo.UserID, id string, alt *string) (*mediamodel.Media, error)
	// Get returns the pictures of ids, in order, nil for an unknown or
	// expired one: one batched read.
	Get(ctx context.Context, ids []string) ([]*mediamodel.Media, error)
	// OfPost returns the ids of p's pictures in order, from the post
	// itself (no read).
	OfPost(p *feed.Post) []string
	// Publish publishes author's post of content with the pictures ids
	// attached (1 to MaxPostMedia of author's own, not yet attached;
	// content may then be empty).
	Publish(ctx context.Context, author weibo.UserID, content string, ids []string) (*feed.Post, error)
}

// Limits of pictures.
const (
	// MaxUploadFileBytes bounds an uploaded file (PAYLOAD_TOO_LARGE): 20
	// MB, as the processing's own bound.
	MaxUploadFileBytes = 20 << 20
	// MaxPostMedia is the most pictures a post carries (a nine-grid).
	MaxPostMedia = 9
	// UploadRate uploads per UploadWindow per user (RATE_LIMITED).
	UploadRate   = 30
	UploadWindow = 10 * time.Minute
	// UploadNodes is the query budget uploadMedia costs: the work of
	// decoding and resizing a picture, which makes it a heavy operation.
	UploadNodes = 2_000
)

const codePayloadTooLarge = "PAYLOAD_TOO_LARGE"

// errNoMedia answers the picture fields of a gateway without a media store.
var errNoMedia = &weibo.Error{Code: weibo.CodeUnavailable, Message: "pictures are not served by this gateway"}

// UploadLimiter counts each user's uploads in a sliding window: at most
// Rate per Window (in this process).
type UploadLimiter struct {
	rate   int
	window time.Duration
	now    func() time.Time
	mu     sync.Mutex
	seen   map[weibo.UserID][]time.Time // oldest first, at most rate
	takes  int
}

// NewUploadLimiter returns a limiter of rate uploads per window; now
// replaces time.Now (nil: time.Now).
func NewUploadLimiter(rate int, window time.Duration, now func() time.Time) *UploadLimiter {
	if now == nil {
		now = time.Now
	}
	return &UploadLimiter{rate: rate, window: window, now: now, seen: map[weibo.UserID][]time.Time{}}
}

// take counts one upload of uid and returns 0, or, when uid's window is
// full, how long until it has room (nothing counted).
func (l *UploadLimiter) take(uid weibo.UserID) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.takes++; l.takes%1024 == 0 { // drop users whose uploads all left the window
		for u, ts := range l.seen {
			if !now.Before(ts[len(ts)-1].Add(l.window)) {
				delete(l.seen, u)
			}
		}
	}
	ts := l.seen[uid]
	for len(ts) > 0 && !now.Before(ts[0].Add(l.window)) {
		ts = ts[1:]
	}
	if len(ts) >= l.rate {
		l.seen[uid] = ts
		return ts[0].Add(l.window).Sub(now)
	}
	l.seen[uid] = append(ts, now)
	return 0
}

// rateLimited is the RATE_LIMITED error of a full upload window, with
// extensions.retryAfter in whole seconds, as the server's throttles give.
func rateLimited(wait time.Duration) error {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	return &gqlerror.Error{Message: "at most 30 uploads per 10 minutes: try again later",
		Extensions: map[string]any{"code": codeRateLimited, "retryAfter": secs}}
}

// readUpload reads an uploaded file, at most MaxUploadFileBytes.
func readUpload(f graphql.Upload) ([]byte, error) {
	tooLarge := &weibo.Error{Code: codePayloadTooLarge, Field: "file", Message: "the file is larger than 20 MB"}
	if f.Size > MaxUploadFileBytes {
		return nil, tooLarge
	}
	if f.File == nil {
		return nil, weibo.BadInput("file", "the file is missing")
	}
	data, err := io.ReadAll(io.LimitReader(f.File, MaxUploadFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxUploadFileBytes {
		return nil, tooLarge
	}
	if len(data) == 0 {
		return nil, weibo.BadInput("file", "the file is empty")
	}
	return data, nil
}

// uploadMedia checks the viewer's upload rate, reads the file and hands it
// to the media service.
func (r *Resolver) uploadMedia(ctx context.Context, file graphql.Upload, alt *string) (*mediamodel.Media, error) {
	if r.Svc.Media == nil {
		return nil, errNoMedia
	}
	viewer := viewerOf(ctx)
	if r.Uploads != nil {
		if wait := r.Uploads.take(viewer); wait > 0 {
			return nil, rateLimited(wait)
		}
	}
	data, err := readUpload(file)
	if err != nil {
		return nil, err
	}
	return r.Svc.Media.Upload(ctx, viewer, data, alt)
}

// publishWithMedia publishes a post with pictures (mediaIds given).
func (r *Resolver) publishWithMedia(ctx context.Context, content string, mediaIds []string) (*feed.Post, error) {
	if r.Svc.Media == nil {
		return nil, errNoMedia
	}
	if len(mediaIds) == 0 || len(mediaIds) > MaxPostMedia {
		return nil, weibo.BadInput("mediaIds", "a post carries 1 to 9 pictures")
	}
	return r.Svc.Media.Publish(ctx, viewerOf(ctx), content, mediaIds)
}

// postMedia loads a post's pictures through the request's media loader
// (primed for a page by prefetchMedia); an expired one is left out.
func (r *Resolver) postMedia(ctx context.Context, p *feed.Post) ([]*mediamodel.Media, error) {
	if r.Svc.Media == nil {
		return []*mediamodel.Media{}, nil
	}
	ids := r.Svc.Media.OfPost(p)
	if len(ids) == 0 {
		return []*mediamodel.Media{}, nil
	}
	ms, errs := loaders.For(ctx).Media(r.Svc.Media.Get).LoadMany(ctx, ids)()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]*mediamodel.Media, 0, len(ms))
	for _, m := range ms {
		if m != nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// prefetchMedia reads, when the query selects media on a page's posts,
// the pictures of every post of the page with one batched read and primes
// the request's media loader, where Post.media finds them: a page's
// pictures cost that one call whatever its size.
func (r *Resolver) prefetchMedia(ctx context.Context, page *feed.PostConnection) error {
	if r.Svc.Media == nil || !selectsAny(ctx, selections(ctx, "edges", "node"), func(n string) bool { return n == "media" }) {
		return nil
	}
	var ids []string
	for _, e := range page.Edges {
		ids = append(ids, r.Svc.Media.OfPost(e.Post)...)
	}
	if len(ids) == 0 {
		return nil
	}
	ms, err := r.Svc.Media.Get(ctx, ids)
	if err != nil {
		return err
	}
	l := loaders.For(ctx).Media(r.Svc.Media.Get)
	for i, id := range ids {
		l.Prime(ctx, id, ms[i])
	}
	return nil
}

// mediaURL is the path of variant (default MIDDLE) of m:
// /media/<id>/<variant in lower case>, which the server serves.
func mediaURL(m *mediamodel.Media, variant *model.MediaVariant) string {
	v := model.MediaVariantMiddle
	if variant != nil {
		v = *variant
	}
	return "/media/" + m.ID + "/" + strings.ToLower(string(v))
}
