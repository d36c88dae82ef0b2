package server

import (
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// maxThrottled is how many clients (users, addresses, usernames) each
// throttle remembers; the least recently seen are forgotten first, so a
// throttle's memory is bounded whatever the number of clients.
const maxThrottled = 100_000

// budget is the per-client query budget: a token bucket
// (golang.org/x/time/rate) per client that refills perMinute nodes a
// minute and holds at most one minute's worth.
type budget struct {
	perMinute int64
	limiters  *lru.Cache[string, *rate.Limiter]
}

func newBudget(perMinute int64) *budget {
	c, _ := lru.New[string, *rate.Limiter](maxThrottled)
	return &budget{perMinute: perMinute, limiters: c}
}

// take spends n nodes of key's budget at now. It returns 0 and what is
// left, or, when the budget holds less than n, how long until it will (and
// spends nothing). A cost above a minute's worth is charged as a minute's
// worth: any accepted query can run on a full budget.
func (b *budget) take(key string, n int64, now time.Time) (wait time.Duration, remaining int64) {
	lim, ok := b.limiters.Get(key)
	if !ok {
		lim = rate.NewLimiter(rate.Limit(float64(b.perMinute)/60), int(b.perMinute))
		if prev, found, _ := b.limiters.PeekOrAdd(key, lim); found {
			lim = prev
		}
	}
	n = min(max(n, 1), b.perMinute)
	r := lim.ReserveN(now, int(n))
	if !r.OK() {
		return time.Minute, int64(lim.TokensAt(now))
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, int64(lim.TokensAt(now))
	}
	return 0, int64(lim.TokensAt(now))
}

// failures counts failed attempts per key and makes each attempt after
// the first free ones wait longer: base, 2×base, 4×base, … up to maxDelay
// after the previous attempt. A key with no attempt for forget starts over.
type failures struct {
	free     int
	base     time.Duration
	maxDelay time.Duration
	forget   time.Duration
	counts   *lru.Cache[string, *failCount]
}

type failCount struct {
	n    int
	last time.Time
}

func newFailures(free int, base, maxDelay, forget time.Duration) *failures {
	c, _ := lru.New[string, *failCount](maxThrottled)
	return &failures{free: free, base: base, maxDelay: maxDelay, forget: forget, counts: c}
}

// delay is how long after the last attempt the next may come, with n
// failures counted.
func (f *failures) delay(n int) time.Duration {
	if n < f.free {
		return 0
	}
	d := f.base
	for i := f.free; i < n && d < f.maxDelay; i++ {
		d *= 2
	}
	return min(d, f.maxDelay)
}

// wait returns how long key must still wait at now (0: it may try).
func (f *failures) wait(key string, now time.Time) time.Duration {
	c, ok := f.counts.Get(key)
	if !ok || now.Sub(c.last) > f.forget {
		return 0
	}
	return max(c.last.Add(f.delay(c.n)).Sub(now), 0)
}

// add adds delta (±1) to key's count; +1 also stamps now as its last attempt.
func (f *failures) add(key string, now time.Time, delta int) {
	c, ok := f.counts.Get(key)
	if !ok || now.Sub(c.last) > f.forget {
		if delta < 0 {
			return
		}
		c = &failCount{}
		f.counts.Add(key, c)
	}
	c.n = max(c.n+delta, 0)
	if delta > 0 {
		c.last = now
	}
}

// reset forgets key.
func (f *failures) reset(key string) { f.counts.Remove(key) }

// LoginThrottle configures how failed logins slow down: per username and
// per client address, the first failures are free, then each attempt must
// wait 1 s, 2 s, 4 s, … (at most MaxDelay) after the previous one, and a
// key with no attempt for 15 minutes starts over. Failed registrations (a
// taken username, an invalid username or password) count as failures of
// their address; successful ones do not.
type LoginThrottle struct {
	// UserFailures is how many failed logins of one username are free
	// (default 5; negative: no per-username throttling).
	UserFailures int
	// AddressFailures is how many failed logins and failed registrations
	// of one client address are free (default 20; negative: none).
	AddressFailures int
	// MaxDelay caps the wait between attempts (default 5 minutes).
	MaxDelay time.Duration
}

// logins is the login throttle, of logins and registrations. Attempts are
// counted as failures when they begin, so that concurrent attempts cannot
// all pass before the first fails; end undoes that for what turned out not
// to be a failure.
type logins struct {
	mu    sync.Mutex
	users *failures // nil: off
	addrs *failures // nil: off
}

// Delays of the login throttle.
const (
	loginBaseDelay = time.Second
	loginForget    = 15 * time.Minute
	// maxUsernameKey bounds the username part of a throttle key.
	maxUsernameKey = 64
)

func newLogins(c LoginThrottle) *logins {
	l := &logins{}
	if c.UserFailures >= 0 {
		l.users = newFailures(c.UserFailures, loginBaseDelay, c.MaxDelay, loginForget)
	}
	if c.AddressFailures >= 0 {
		l.addrs = newFailures(c.AddressFailures, loginBaseDelay, c.MaxDelay, loginForget)
	}
	return l
}

func userKey(username string) string {
	if len(username) > maxUsernameKey {
		username = username[:maxUsernameKey]
	}
	return strings.ToLower(username)
}

// begin starts an attempt of username ("" for a registration) from addr:
// 0 when it may go ahead (it is then counted), else how long to wait. A nil
// throttle lets all go ahead.
func (l *logins) begin(username, addr string, now time.Time) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var w time.Duration
	if l.users != nil && username != "" {
		w = l.users.wait(userKey(username), now)
	}
	if l.addrs != nil {
		w = max(w, l.addrs.wait(addr, now))
	}
	if w > 0 {
		return w
	}
	if l.users != nil && username != "" {
		l.users.add(userKey(username), now, 1)
	}
	if l.addrs != nil {
		l.addrs.add(addr, now, 1)
	}
	return 0
}

// Outcomes of an attempt, for end.
const (
	attemptFailed    = iota // a wrong password, a refused registration: it stays counted
	attemptSucceeded        // a login or registration that worked: it clears its username, and is not counted
	attemptVoid             // neither (a login's bad input, a store error): not counted
)

// end finishes an attempt begun with begin.
func (l *logins) end(username, addr string, outcome int, now time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch outcome {
	case attemptSucceeded:
		if l.users != nil && username != "" {
			l.users.reset(userKey(username))
		}
		if l.addrs != nil {
			l.addrs.add(addr, now, -1)
		}
	case attemptVoid:
		if l.users != nil && username != "" {
			l.users.add(userKey(username), now, -1)
		}
		if l.addrs != nil {
			l.addrs.add(addr, now, -1)
		}
	}
}

// SignupLimit bounds successful registrations (register) per client
// address: each address may sign up Rate times at once, and the allowance
// refills at Rate per Window (a token bucket, golang.org/x/time/rate), so
// that over time an address gets Rate sign-ups a Window — as Mastodon
// allows 25 per 5 minutes per address. Failed registrations do not count
// here (LoginThrottle counts them).
type SignupLimit struct {
	// Rate is how many sign-ups one address may make per Window (default
	// DefaultSignupRate; negative: no limit).
	Rate int
	// Window is the period of Rate (default DefaultSignupWindow; 0 or
	// negative: the default).
	Window time.Duration
}

// signups is the sign-up limit: a token bucket per client address (the
// least recently seen forgotten first, as the other throttles). A
// registration takes its address's token only when it succeeds; while it
// runs it holds a claim on one (pending), so that concurrent registrations
// cannot all pass on the same token, and a failed one takes nothing.
// (rate.Reservation.CancelAt could not give a token back: it restores
// nothing once the reservation's time has passed, that is, after any
// registration that took time.)
type signups struct {
	mu     sync.Mutex
	rate   int // sign-ups per window, and at once
	window time.Duration
	addrs  *lru.Cache[string, *signupBucket]
}

// signupBucket is one address's bucket and its registrations running.
type signupBucket struct {
	lim     *rate.Limiter
	pending int
}

// newSignups returns the sign-up limit of c (defaults applied), or nil
// when it is off.
func newSignups(c SignupLimit) *signups {
	if c.Rate <= 0 || c.Window <= 0 {
		return nil
	}
	a, _ := lru.New[string, *signupBucket](maxThrottled)
	return &signups{rate: c.Rate, window: c.Window, addrs: a}
}

// begin starts a registration from addr at now: the bucket to end it
// with, or how long until addr may sign up again. A nil limit allows all.
func (s *signups) begin(addr string, now time.Time) (*signupBucket, time.Duration) {
	if s == nil {
		return nil, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.addrs.Get(addr)
	if !ok {
		b = &signupBucket{lim: rate.NewLimiter(rate.Limit(float64(s.rate)/s.window.Seconds()), s.rate)}
		s.addrs.Add(addr, b)
	}
	if short := float64(b.pending+1) - b.lim.TokensAt(now); short > 0 {
		// What the missing tokens take to refill, at window/rate each.
		return nil, time.Duration(short * float64(s.window) / float64(s.rate))
	}
	b.pending++
	return b, 0
}

// end finishes a registration begun with begin: one that succeeded takes
// its token, one that did not gives up its claim.
func (s *signups) end(b *signupBucket, succeeded bool, now time.Time) {
	if b == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b.pending--
	if succeeded {
		// Granted at once: the claim kept the token. (A bucket forgotten
		// meanwhile, among maxThrottled addresses, loses it.)
		b.lim.ReserveN(now, 1)
	}
}
