package server

import "github.com/weibohbase/gateway/weibo"

// refuseSuspended makes cfg.Tokens refuse the tokens of the users
// suspended now, from this instance's registry of suspensions (no store
// call): a suspension's tokens are ended too (suspend.Service.Suspend),
// and this refusal holds even when that ending was lost (a crash between
// the suspension's row and the users row's token generation).
func refuseSuspended(cfg Config) {
	d := cfg.Svc
	cfg.Tokens.RefuseUsers(func(uid weibo.UserID) bool { return d.Suspensions.Suspended(uid, d.Writes.NowMillis()) })
}
