package feed

import (
	"context"
	"errors"

	"github.com/weibohbase/gateway/weibo"
)

// MediaCheck checks that author may publish a post with the pictures
// media (package weibo/media: 1 to 9 of author's own uploads, not
// attached yet); BAD_USER_INPUT (field "mediaIds") otherwise.
type MediaCheck func(ctx context.Context, author weibo.UserID, media []weibo.MediaID) error

// MediaPartMaker makes the media module's part of the write of a post of
// author with pictures media: a publish (publish true: the part attaches
// them) or a delete (the part releases them).
type MediaPartMaker func(author weibo.UserID, media []weibo.MediaID, publish bool) PostPart

// RegisterMedia sets the media module's check and part of every publish
// with pictures and every delete of one (a post-part registry of its own:
// the part needs the post's media, which PartMaker does not get). The
// media module registers while the domain is wired, before any call.
func (s *Service) RegisterMedia(check MediaCheck, make MediaPartMaker) {
	s.mediaCheck, s.mediaPart = check, make
}

// errNoMedia is Publish's error with pictures when no media module is wired.
var errNoMedia = errors.New("pictures are not supported: no media module")
