package feed

import "github.com/weibohbase/gateway/weibo"

// The feed's errors, all *weibo.Error values with the codes and reasons of
// package weibo.

// errBadLogin is Login's answer for an unknown user and a wrong password alike.
var errBadLogin = &weibo.Error{Code: weibo.CodeUnauthenticated, Message: "wrong username or password"}

func errTaken(username string) error {
	return weibo.BadReason("username", weibo.ReasonUsernameTaken, "username "+username+" is taken")
}
