package account

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// newTestService returns a service over a migrated store of each backend.
func newTestService(t *testing.T, st hbase.StoreAdmin) *Service {
	t.Helper()
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	return newService(st, 4)
}

// newService returns a service over st, of bcrypt cost cost, publishing on
// a bus of its own.
func newService(st hbase.Store, cost int) *Service {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return New(st, counted.New(st, counted.WithLogger(log)), events.NewEmitter(bus.NewLocal(), false, log), WithBcryptCost(cost))
}

func uniqueUsername(prefix string) string {
	return prefix + "_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "_")
}

// TestChangePasswordRace: two password changes from the same current
// password at once: one wins and moves the generation by one; the other,
// checked against the winner's hash on its retry, is UNAUTHENTICATED. The
// row holds the winner's hash and the generation it returned.
func TestChangePasswordRace(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			svc := newTestService(t, b.Open(t))
			ctx := t.Context()
			u, err := svc.Register(ctx, uniqueUsername("race"), "first password")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			results := make([]error, 2)
			users := make([]*weibo.User, 2)
			for i := range 2 {
				wg.Go(func() {
					users[i], results[i] = svc.ChangePassword(ctx, u.ID, "first password", []string{"second pw A", "second pw B"}[i])
				})
			}
			wg.Wait()
			won := -1
			for i, err := range results {
				switch {
				case err == nil:
					if won >= 0 {
						t.Fatalf("both changes won")
					}
					won = i
				case weibo.CodeOf(err) != weibo.CodeUnauthenticated:
					t.Fatalf("the losing change: %v, want UNAUTHENTICATED", err)
				}
			}
			if won < 0 {
				t.Fatalf("no change won: %v", results)
			}
			if users[won].TokenGeneration != 1 {
				t.Errorf("generation after one change = %d, want 1", users[won].TokenGeneration)
			}
			got, ended, err := svc.ReadUserTokens(ctx, u.ID)
			if err != nil || got.TokenGeneration != 1 || len(ended) != 0 {
				t.Fatalf("row after the race: %+v, %v, %v", got, ended, err)
			}
			if _, err := svc.Login(ctx, u.Username, []string{"second pw A", "second pw B"}[won]); err != nil {
				t.Errorf("the winner's password does not log in: %v", err)
			}
			if _, err := svc.Login(ctx, u.Username, "first password"); weibo.CodeOf(err) != weibo.CodeUnauthenticated {
				t.Errorf("the old password: %v, want UNAUTHENTICATED", err)
			}
		})
	}
}

// TestEndTokens: EndToken records a token until its expiry (the family's
// TTL drops the record then), LogoutEverywhere's EndAllTokens moves the
// generation, and a logout that finds MaxEndedTokens live records ends all
// tokens instead of adding one more.
func TestEndTokens(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			svc := newTestService(t, b.Open(t))
			ctx := t.Context()
			u, err := svc.Register(ctx, uniqueUsername("ends"), "a password")
			if err != nil {
				t.Fatal(err)
			}
			soon := time.Now().Add(1500 * time.Millisecond)
			later := time.Now().Add(time.Hour)
			for i, exp := range []time.Time{soon, later} {
				if all, _, err := svc.EndToken(ctx, u.ID, weibo.TokenID{byte(i + 1)}, exp); err != nil || all {
					t.Fatalf("EndToken: all %v, %v", all, err)
				}
			}
			if _, ended, err := svc.ReadUserTokens(ctx, u.ID); err != nil || len(ended) != 2 {
				t.Fatalf("ended tokens = %x, %v; want 2", ended, err)
			}
			time.Sleep(time.Until(soon) + 200*time.Millisecond)
			if _, ended, err := svc.ReadUserTokens(ctx, u.ID); err != nil || len(ended) != 1 || ended[0] != (weibo.TokenID{2}) {
				t.Fatalf("after the first expiry, ended tokens = %x, %v; want the second only", ended, err)
			}
			if gen, err := svc.EndAllTokens(ctx, u.ID); err != nil || gen != 1 {
				t.Fatalf("EndAllTokens = %d, %v; want 1", gen, err)
			}
			for i := 1; i < MaxEndedTokens; i++ {
				if all, _, err := svc.EndToken(ctx, u.ID, weibo.TokenID{0xee, byte(i), byte(i >> 8)}, later); err != nil || all {
					t.Fatalf("EndToken #%d: all %v, %v", i, all, err)
				}
			}
			all, gen, err := svc.EndToken(ctx, u.ID, weibo.TokenID{0xff}, later)
			if err != nil || !all || gen != 2 {
				t.Fatalf("EndToken beyond %d records: all %v, generation %d, %v; want all, 2", MaxEndedTokens, all, gen, err)
			}
			if got, ended, err := svc.ReadUserTokens(ctx, u.ID); err != nil || got.TokenGeneration != 2 || len(ended) != MaxEndedTokens {
				t.Fatalf("row: generation %d, %d records, %v", got.TokenGeneration, len(ended), err)
			}
		})
	}
}

// TestUpdateProfile: set, keep (nil), clear ("" deletes the cell) and
// refuse (nothing written, not even a valid other field).
func TestUpdateProfile(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			svc := newTestService(t, st)
			ctx := t.Context()
			u, err := svc.Register(ctx, uniqueUsername("prof"), "a password")
			if err != nil {
				t.Fatal(err)
			}
			str := func(s string) *string { return &s }
			want := func(what string, got *weibo.User, dn, bio string) {
				t.Helper()
				if got == nil || got.DisplayName != dn || got.Bio != bio {
					t.Fatalf("%s: %+v, want display name %q, bio %q", what, got, dn, bio)
				}
				r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(u.ID), Families: []string{tables.FamInfo}})
				if err != nil {
					t.Fatal(err)
				}
				for col, v := range map[string]string{tables.ColDisplayName: dn, tables.ColBio: bio} {
					if c := r.Cell(tables.FamInfo, col); (c == nil) != (v == "") || c != nil && string(c.Value) != v {
						t.Fatalf("%s: cell i:%s = %+v, want %q (absent when empty)", what, col, c, v)
					}
				}
			}
			got, err := svc.UpdateProfile(ctx, u.ID, str("小明 Ming"), str("第一行\nsecond line 🙂"))
			if err != nil {
				t.Fatal(err)
			}
			want("set both", got, "小明 Ming", "第一行\nsecond line 🙂")
			got, err = svc.UpdateProfile(ctx, u.ID, nil, str(""))
			if err != nil {
				t.Fatal(err)
			}
			want("clear the bio", got, "小明 Ming", "")
			got, err = svc.UpdateProfile(ctx, u.ID, str("Ming"), str("back"))
			if err != nil {
				t.Fatal(err)
			}
			want("replace one, set the other", got, "Ming", "back")
			for _, c := range []struct {
				name, field string
				dn, bio     *string
			}{
				{"a 31-character name", "displayName", str(strings.Repeat("名", 31)), str("new bio")},
				{"a name of spaces", "displayName", str(" \u3000 "), nil},
				{"a name on two lines", "displayName", str("Ming\nWang"), nil},
				{"a name with a tab", "displayName", str("Ming\tWang"), nil},
				{"a name over its bytes", "displayName", str(strings.Repeat("e"+strings.Repeat("\u0301", 5), 30)), nil},
				{"a 161-character bio", "bio", str("new name"), str(strings.Repeat("b", 161))},
				{"a bio of zero-width spaces", "bio", nil, str("\u200b\u200b")},
				{"a bio of invalid UTF-8", "bio", nil, str("ok \xff")},
			} {
				_, err := svc.UpdateProfile(ctx, u.ID, c.dn, c.bio)
				if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Code != weibo.CodeBadUserInput || e.Field != c.field {
					t.Errorf("%s: %v, want BAD_USER_INPUT on %s", c.name, err, c.field)
				}
			}
			got, err = svc.UpdateProfile(ctx, u.ID, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want("after the refused updates", got, "Ming", "back")
			for _, ok := range []string{strings.Repeat("名", 30), strings.Repeat("👨‍👩‍👧‍👦", 10)} {
				if _, err := svc.UpdateProfile(ctx, u.ID, &ok, nil); err != nil {
					t.Errorf("a name of %d bytes, 30 characters or fewer: %v", len(ok), err)
				}
			}
			got, err = svc.UpdateProfile(ctx, u.ID, str(""), str(""))
			if err != nil {
				t.Fatal(err)
			}
			want("clear both", got, "", "")
		})
	}
}
