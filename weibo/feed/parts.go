package feed

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
)

// PostPart is a module's part in the counted write of one post's content
// row — a publish or a delete —, made by the module's PartMaker for that
// post. The write calls it at fixed points (Publish and DeletePost list
// them), in the order the modules registered:
//   - Mark before each content row the write tries (a publish that moves
//     to the next millisecond marks again, for the new id), after the
//     write's own marker and sequence: the part's marker and sequences;
//   - Count once the content row is written (+1) or deleted (-1): the
//     part's counters, within its budget;
//   - Settle after the counters, with the content row's state as the
//     write left it (stored): the part's dependents, then its markers
//     ended (or kept for the repairer);
//   - End instead of Count and Settle when the write changed nothing (a
//     delete that found the post gone): its markers ended.
//
// Errors leave the part's markers to the repairer.
type PostPart interface {
	Mark(ctx context.Context, id weibo.PostID) error
	Count(ctx context.Context, d int64) error
	Settle(ctx context.Context, id weibo.PostID, stored bool) error
	End(ctx context.Context) error
}

// PartMaker makes a module's part of the write of a post with text whose
// root is repostOf (nil for an original post), or returns nil when the
// module has no part in it.
type PartMaker func(text string, repostOf *weibo.PostID) PostPart

// RegisterPostPart adds make's parts to every publish and delete of a
// post. Modules register while the domain is wired, before any call.
func (s *Service) RegisterPostPart(make PartMaker) {
	s.partMakers = append(s.partMakers, make)
}

// postParts makes the registered modules' parts of the write of a post
// with text and root repostOf.
func (s *Service) postParts(text string, repostOf *weibo.PostID) []PostPart {
	var out []PostPart
	for _, make := range s.partMakers {
		if p := make(text, repostOf); p != nil {
			out = append(out, p)
		}
	}
	return out
}
