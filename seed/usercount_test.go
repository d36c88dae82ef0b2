package seed

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestSeedUserCount: an import sets the number of all users to the data
// set's users plus those registered through the API before it — whatever
// the counter held —, a re-run leaves it so, registrations after it count
// on from there, and fsck finds nothing at each point.
func TestSeedUserCount(t *testing.T) {
	ctx := context.Background()
	ds := smallDataset(t)
	st := newSeedStore(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), domain.WithOutboxSweep(0), domain.WithBcryptCost(4))
	for _, name := range []string{"early_one", "early_two"} {
		if _, err := svc.Accounts.Register(ctx, name, "correct horse"); err != nil {
			t.Fatal(err)
		}
	}
	// A counter gone wrong before the import: the import recounts it.
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserCountKey,
		Values: hbase.Values{tables.FamCount: {tables.ColUserCount: tables.U64(1000)}}}); err != nil {
		t.Fatal(err)
	}
	want := int64(len(ds.Users)) + 2
	check := func(when string) {
		t.Helper()
		if n, err := svc.Accounts.UserCount(ctx); err != nil || n != want {
			t.Errorf("%s: user count %d, %v; want %d", when, n, err, want)
		}
		rep, err := fsck.Run(ctx, svc, fsck.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Issues) > 0 {
			t.Errorf("%s: fsck found %+v", when, rep.Issues)
		}
	}
	for run := range 2 {
		if _, err := Import(ctx, st, ds, seedTestOptions); err != nil {
			t.Fatal(err)
		}
		check([]string{"after the import", "after a re-run"}[run])
	}
	if _, err := svc.Accounts.Register(ctx, "late_one", "correct horse"); err != nil {
		t.Fatal(err)
	}
	want++
	check("after a registration")
}
