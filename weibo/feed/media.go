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

// errNoMedia is PublishWithMedia's error when no media module is wired.
var errNoMedia = errors.New("pictures are not supported: no media module")

// PublishWithMedia publishes, as Publish does, a post by author with the
// pictures media, in order: its content row lists them (tables.ColPostMedia,
// Post.Media) and the media module's part attaches them (RegisterMedia).
// With media, content may be empty; without, it is Publish. Errors as for
// Publish, and BAD_USER_INPUT (field "mediaIds") when the media check
// refuses them.
func (s *Service) PublishWithMedia(ctx context.Context, author weibo.UserID, content string, media []weibo.MediaID) (_ *Post, err error) {
	if len(media) == 0 {
		return s.Publish(ctx, author, content)
	}
	defer weibo.Wrapf(&err, "publish with media by %s", author)
	if content != "" {
		if err := ValidateContent(content); err != nil {
			return nil, err
		}
	}
	if s.mediaCheck == nil || s.mediaPart == nil {
		return nil, errNoMedia
	}
	if err := s.mediaCheck(ctx, author, media); err != nil {
		return nil, err
	}
	return s.publish(ctx, author, content, nil, media)
}
