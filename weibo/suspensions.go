package weibo

// Suspensions says, from memory, whether a user is suspended at a moment:
// a suspended user's posts, comments, likes and reposts leave every other
// user's reads, decided at read time so that a lifted or ended suspension
// brings them back exactly. The read modules (timeline, feed, topic,
// comment, like, repost, notify) are handed one when the domain is wired;
// *suspend.Registry (package weibo/moderation/suspend) implements it. It
// is declared here, once, rather than by each module that needs it: seven
// modules ask it the same one question.
type Suspensions interface {
	// Suspended reports whether uid is suspended at nowMillis (ms since
	// the epoch). It makes no store call and must be safe for concurrent
	// use.
	Suspended(uid UserID, nowMillis int64) bool
}

// NoSuspensions suspends nobody: a module's Suspensions until the domain
// hands it the registry.
var NoSuspensions Suspensions = noSuspensions{}

type noSuspensions struct{}

func (noSuspensions) Suspended(UserID, int64) bool { return false }
