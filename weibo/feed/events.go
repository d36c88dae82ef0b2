package feed

import (
	"context"
	"encoding/json"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The write side of the home timelines' live events (their subjects and
// wire form: package events, home.go): the publish, fan-out, delete and
// follow of the feed publish them over the bus, and package timeline's
// subscriptions read them.

// WithBus sets the bus live events travel on (default: a bus.Local of this
// Service alone). Given one, the home timeline's WatchTimeline (package
// timeline) relies on its events and polls only while it is away: the
// instances writing to the store must share it.
func WithBus(b bus.Bus) Option { return func(o *options) { o.bus = b } }

// WithEvents sets the Emitter live events are published with, shared with
// the domain's other modules (packages account, notify and timeline: its
// Hub wakes the timeline's watchers on the feed's writes); it overrides
// WithBus.
func WithEvents(e *events.Emitter) Option { return func(o *options) { o.events = e } }

// encodeEvent encodes e; it cannot fail (strings only).
func encodeEvent(e events.HomeEvent) []byte {
	b, _ := json.Marshal(e)
	return b
}

// addedEvent is the encoded events.KindAdd event of p.
func addedEvent(p *Post) []byte {
	e := events.HomeEvent{K: events.KindAdd, P: p.ID.String(), N: p.AuthorName, C: p.Content}
	if p.RepostOfID != nil {
		e.R = p.RepostOfID.String()
	}
	return encodeEvent(e)
}

// publishToHomes publishes data on the home subjects of owners.
func (s *Service) publishToHomes(data []byte, owners ...weibo.UserID) {
	for _, uid := range owners {
		s.events.Emit(events.HomeSubject(uid), data)
	}
}

// emitPosted publishes the add event of p, just stored: to its author's
// home subject and, for a large author, to its author subject.
func (s *Service) emitPosted(p *Post, large bool) {
	data := addedEvent(p)
	s.events.Emit(events.HomeSubject(p.ID.Author), data)
	if large {
		s.events.Emit(events.AuthorSubject(p.ID.Author), data)
	}
}

// emitDeleted publishes the delete event of post id to owners' home
// subjects and, with author, to its author's subject.
func (s *Service) emitDeleted(id weibo.PostID, author bool, owners ...weibo.UserID) {
	data := encodeEvent(events.HomeEvent{K: events.KindDelete, P: id.String()})
	if author {
		s.events.Emit(events.AuthorSubject(id.Author), data)
	}
	s.publishToHomes(data, owners...)
}

// AnnounceLarge tells the live streams of author's fans that author has
// become large, so that its posts reach no inbox from now on: a follow
// event on each fan's home subject makes their streams listen to author's
// subject (streams that start later learn the large accounts when they
// start). One scan of the fans, in the background (FlushFanout waits for
// it; Close stops it). A post of author published before a stream heard
// the event reaches that stream only when it resumes.
func (s *Service) AnnounceLarge(author weibo.UserID) {
	data := encodeEvent(events.HomeEvent{K: events.KindFollow, A: author.String()})
	s.retractions.run(func(ctx context.Context) {
		err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(author, tables.Fans)}, func(r *hbase.Result) error {
			if _, _, fan, ok := tables.DecodeRelationKey(r.Row); ok {
				s.events.Emit(events.HomeSubject(fan), data)
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			s.log.Warn("live events: the fans of a new large account not told; their streams learn it when they resume", "user", author.String(), "err", err)
		}
	})
}
