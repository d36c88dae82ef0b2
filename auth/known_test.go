package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// fakeRow is a users row as a UserCheck reads it: its generation and the
// ids of its ended tokens; reads counts the check's reads.
type fakeRow struct {
	gone  bool
	gen   int64
	ended map[weibo.TokenID]bool
	reads int
	err   error
}

func (r *fakeRow) check(_ context.Context, t Token) (TokenState, error) {
	r.reads++
	switch {
	case r.err != nil:
		return 0, r.err
	case r.gone:
		return TokenUserGone, nil
	case t.Generation != r.gen || r.ended[t.ID]:
		return TokenEnded, nil
	}
	return TokenValid, nil
}

// clock is a settable clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// request returns the context of a request carrying token, checked with row.
func request(iss *Issuer, token string, row *fakeRow) context.Context {
	return WithUserCheck(iss.WithAuthorization(context.Background(), "Bearer "+token), row.check)
}

func issue(t *testing.T, iss *Issuer, uid weibo.UserID, gen int64) (string, Token) {
	t.Helper()
	s, err := iss.Issue(uid, time.UnixMilli(1583020800123), gen)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Verify(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, tok
}

// wantViewer checks Viewer's answer: the user, or an UNAUTHENTICATED error
// whose message contains msg.
func wantViewer(t *testing.T, ctx context.Context, uid weibo.UserID, msg string) {
	t.Helper()
	got, err := Viewer(ctx)
	switch {
	case msg == "" && (err != nil || got != uid):
		t.Fatalf("Viewer = %v, %v; want %v", got, err, uid)
	case msg != "" && (weibo.CodeOf(err) != weibo.CodeUnauthenticated || !strings.Contains(err.Error(), msg)):
		t.Fatalf("Viewer = %v, %v; want UNAUTHENTICATED %q", got, err, msg)
	}
}

// TestViewerChecksTheRow: a token is good while its row accepts it; a
// token found good is not read again within the window (10 s), and is
// read again after it; the row's verdicts give their own messages; a
// store error is returned as it is.
func TestViewerChecksTheRow(t *testing.T) {
	c := &clock{time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	iss := NewIssuer([]byte("0123456789abcdef0123456789abcdef"), time.Hour, WithClock(c.Now))
	s, _ := issue(t, iss, 7, 2)
	row := &fakeRow{gen: 2}
	// Issued here: known good without a read for the window.
	wantViewer(t, request(iss, s, row), 7, "")
	c.now = c.now.Add(DefaultRecheckAfter - time.Millisecond)
	wantViewer(t, request(iss, s, row), 7, "")
	if row.reads != 0 {
		t.Fatalf("%d reads within the window of the issue, want 0", row.reads)
	}
	c.now = c.now.Add(time.Millisecond)
	ctx := request(iss, s, row)
	wantViewer(t, ctx, 7, "")
	wantViewer(t, ctx, 7, "") // once per request
	if row.reads != 1 {
		t.Fatalf("%d reads after the window, want 1", row.reads)
	}
	// Another instance ends it: this one obeys when its window has passed.
	row.gen = 3
	wantViewer(t, request(iss, s, row), 7, "")
	c.now = c.now.Add(DefaultRecheckAfter)
	wantViewer(t, request(iss, s, row), 0, "it was ended")
	row.gone = true
	wantViewer(t, request(iss, s, row), 0, "no longer exists")
	row.gone, row.err = false, errors.New("store down")
	if _, err := Viewer(request(iss, s, row)); !errors.Is(err, row.err) {
		t.Fatalf("Viewer with a failing check = %v, want the store's error", err)
	}
}

// TestEndedHere: the instance that ends a token refuses it at once — when
// it was known good, in a request whose check passed before the ending,
// and when a check that read the row before the ending records it good
// afterwards — while the user's other tokens stay good (logout) or not
// (EndedAll below their generation).
func TestEndedHere(t *testing.T) {
	c := &clock{time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	iss := NewIssuer([]byte("0123456789abcdef0123456789abcdef"), time.Hour, WithClock(c.Now))
	row := &fakeRow{gen: 0}
	s1, t1 := issue(t, iss, 7, 0)
	s2, _ := issue(t, iss, 7, 0)
	s3, _ := issue(t, iss, 8, 0) // another user's

	during := request(iss, s1, row)
	wantViewer(t, during, 7, "")
	iss.Ended(t1) // logout of s1 (its row is written by the caller)
	wantViewer(t, during, 0, "it was ended")
	wantViewer(t, request(iss, s1, row), 0, "it was ended")
	wantViewer(t, request(iss, s2, row), 7, "")
	// A check that read the row before the ending cannot make it good again.
	iss.known.add(t1, c.now)
	wantViewer(t, request(iss, s1, row), 0, "it was ended")

	// logoutEverywhere: generation 1 now; tokens of generation 0 end.
	iss.EndedAll(7, 1)
	wantViewer(t, request(iss, s2, row), 0, "it was ended")
	wantViewer(t, request(iss, s3, row), 8, "")
	s4, _ := issue(t, iss, 7, 1) // issued after, by changePassword
	row.gen = 1
	wantViewer(t, request(iss, s4, row), 7, "")
	if row.reads != 0 {
		t.Errorf("%d row reads, want none (every answer was known here)", row.reads)
	}
}

// TestRecheck: a subscription's recheck refuses an expired token and an
// ended one, reads the row (with the given check) once the window has
// passed, and accepts a good one.
func TestRecheck(t *testing.T) {
	c := &clock{time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	iss := NewIssuer([]byte("0123456789abcdef0123456789abcdef"), time.Minute, WithClock(c.Now), WithRecheckAfter(time.Second))
	row := &fakeRow{}
	s, tok := issue(t, iss, 7, 0)
	ctx := request(iss, s, row)
	wantViewer(t, ctx, 7, "")
	if err := iss.Recheck(ctx, row.check); err != nil || row.reads != 0 {
		t.Fatalf("Recheck within the window = %v (%d reads)", err, row.reads)
	}
	c.now = c.now.Add(time.Second)
	if err := iss.Recheck(ctx, row.check); err != nil || row.reads != 1 {
		t.Fatalf("Recheck after the window = %v (%d reads), want nil after one read", err, row.reads)
	}
	row.ended = map[weibo.TokenID]bool{tok.ID: true} // logout on another instance
	c.now = c.now.Add(time.Second)
	if err := iss.Recheck(ctx, row.check); weibo.CodeOf(err) != weibo.CodeUnauthenticated {
		t.Fatalf("Recheck of a token ended elsewhere = %v", err)
	}
	row.ended = nil
	c.now = c.now.Add(time.Minute)
	if err := iss.Recheck(ctx, row.check); weibo.CodeOf(err) != weibo.CodeUnauthenticated || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("Recheck of an expired token = %v", err)
	}
	if err := iss.Recheck(context.Background(), row.check); weibo.CodeOf(err) != weibo.CodeUnauthenticated {
		t.Fatalf("Recheck without a token = %v", err)
	}
}

// TestWatch: a watch is closed when its token ends here (alone, or with
// its generation), not when another token does; a watch of a token ended
// already is closed at once; a stopped watch is not closed.
func TestWatch(t *testing.T) {
	iss := NewIssuer([]byte("0123456789abcdef0123456789abcdef"), time.Hour)
	row := &fakeRow{}
	s1, t1 := issue(t, iss, 7, 0)
	s2, _ := issue(t, iss, 7, 0)
	s3, _ := issue(t, iss, 7, 0)
	w1, stop1 := iss.Watch(request(iss, s1, row))
	defer stop1()
	w2, stop2 := iss.Watch(request(iss, s2, row))
	defer stop2()
	w3, stop3 := iss.Watch(request(iss, s3, row))
	stop3()
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	iss.Ended(t1)
	if !closed(w1) || closed(w2) {
		t.Fatalf("after ending token 1: watch 1 closed %v, watch 2 closed %v", closed(w1), closed(w2))
	}
	if again, stop := iss.Watch(request(iss, s1, row)); !closed(again) {
		t.Fatal("a watch of an ended token is open")
	} else {
		stop()
	}
	iss.EndedAll(7, 1)
	if !closed(w2) || closed(w3) {
		t.Fatalf("after ending generation 0: watch 2 closed %v, stopped watch 3 closed %v", closed(w2), closed(w3))
	}
	if w, stop := iss.Watch(context.Background()); w != nil {
		t.Fatal("a watch without a token")
	} else {
		stop()
	}
}
