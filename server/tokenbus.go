package server

import (
	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo/account"
)

// listenTokenEndings hands the token endings published on the bus by any
// gateway instance sharing it (account.Service.OnTokensEnded) to this
// instance's Issuer, which refuses those tokens at once and closes their
// subscriptions: open subscriptions then need not read their users rows
// to learn of endings while the bus is connected (resolvers'
// whileTokenValid). It reports whether the bus took the subscription: if
// not, they keep their periodic reads, as while the bus is away.
func listenTokenEndings(cfg Config) bool {
	_, err := cfg.Svc.Accounts.OnTokensEnded(func(e account.TokensEnded) {
		if e.Token == (account.TokensEnded{}).Token {
			cfg.Tokens.EndedAll(e.User, e.Below)
			return
		}
		cfg.Tokens.Ended(auth.Token{User: e.User, ID: e.Token, Expires: e.Expires})
	})
	if err != nil {
		cfg.Logger.Warn("token endings of other instances not heard over the bus; subscriptions read their users rows instead", "err", err)
	}
	return err == nil
}
