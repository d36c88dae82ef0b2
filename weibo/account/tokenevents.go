package account

import (
	"encoding/json"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// Token endings over the bus: a logout, logoutEverywhere or
// changePassword made through one gateway instance is published, after
// the store's write, on one subject every instance listens to, so that
// each instance refuses the ended tokens at once and closes their
// subscriptions. While the bus is connected, open subscriptions need not
// read their users row again to learn of endings (package resolvers);
// they fall back to their periodic reads while it is away.

// tokensSubject is the subject of every token ending.
const tokensSubject = "weibo.tokens"

// TokensEnded is an ending of tokens made through a gateway instance
// sharing the bus (this one included).
type TokensEnded struct {
	// User is the tokens' user.
	User weibo.UserID
	// Token, when not zero, is the one token ended (logout), which
	// expires at Expires. When zero, every token of User below generation
	// Below was ended.
	Token   weibo.TokenID
	Expires time.Time
	Below   int64
}

// tokensEvent is the wire form of TokensEnded (JSON).
type tokensEvent struct {
	U string `json:"u"`
	T string `json:"t,omitempty"`
	X int64  `json:"x,omitempty"` // Expires, ms since the epoch
	G int64  `json:"g,omitempty"`
}

// emitTokensEnded publishes e; an error is counted and logged
// (events.Emitter.Emit): the other instances then learn of the ending at
// their next read of the row.
func (s *Service) emitTokensEnded(e TokensEnded) {
	w := tokensEvent{U: e.User.String(), G: e.Below}
	if e.Token != (weibo.TokenID{}) {
		w = tokensEvent{U: e.User.String(), T: e.Token.String(), X: e.Expires.UnixMilli()}
	}
	b, _ := json.Marshal(w)
	s.events.Emit(tokensSubject, b)
}

// OnTokensEnded calls fn with each ending of tokens published on the bus
// from now on, by any instance sharing it, until cancel is called. fn must
// not block. Errors: the bus's, when it refuses to subscribe.
func (s *Service) OnTokensEnded(fn func(TokensEnded)) (cancel func(), err error) {
	return s.events.Bus().Subscribe(tokensSubject, func(data []byte) {
		var w tokensEvent
		if json.Unmarshal(data, &w) != nil {
			return
		}
		uid, err := weibo.ParseUserID(w.U)
		if err != nil {
			return
		}
		e := TokensEnded{User: uid, Below: w.G}
		if w.T != "" {
			if e.Token, err = weibo.ParseTokenID(w.T); err != nil {
				return
			}
			e.Expires = time.UnixMilli(w.X)
		}
		fn(e)
	})
}
