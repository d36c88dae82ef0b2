package suspend_test

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRegistryFollowsTheTable writes suspension rows behind the
// registries' backs, on both backends: a registry without a bus (as one
// whose bus is away) sees each change at its next scan; one over a
// connected bus sees a change once it is announced on the bus (a
// suspension made through another instance), reading the row again;
// both count an ended suspension as none.
func TestRegistryFollowsTheTable(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			uid := weibo.UserID(4242)
			put := func(c tables.SuspensionCells) {
				t.Helper()
				if err := st.Put(ctx, &hbase.Put{Table: tables.Suspensions, Row: tables.SuspensionKey(uid), Values: tables.EncodeSuspension(c)}); err != nil {
					t.Fatal(err)
				}
			}
			await := func(r *suspend.Registry, want bool) {
				t.Helper()
				deadline := time.Now().Add(15 * time.Second)
				for r.Suspended(uid, time.Now().UnixMilli()) != want {
					if time.Now().After(deadline) {
						t.Fatalf("suspended never became %v", want)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			scanning := suspend.NewRegistry(st, nil, nil, 10*time.Millisecond)
			if err := scanning.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer scanning.Close()
			local := bus.NewLocal()
			listening := suspend.NewRegistry(st, local, nil, time.Hour)
			if err := listening.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer listening.Close()
			if scanning.Suspended(uid, time.Now().UnixMilli()) || listening.Suspended(uid, time.Now().UnixMilli()) {
				t.Fatal("suspended before any row")
			}

			now := time.Now().UnixMilli()
			put(tables.SuspensionCells{Since: now})
			await(scanning, true)
			if err := local.Publish("weibo.suspensions", []byte(uid.String())); err != nil {
				t.Fatal(err)
			}
			await(listening, true)
			if until, ok := listening.SuspendedUntil(uid, now); !ok || until != 0 {
				t.Fatalf("SuspendedUntil = %d, %v", until, ok)
			}
			// An end in the past (written by hand: the API refuses it) is
			// no suspension, whatever the registry holds.
			put(tables.SuspensionCells{Since: now - 2000, Until: now - 1000})
			await(scanning, false)
			if err := st.Delete(ctx, &hbase.Delete{Table: tables.Suspensions, Row: tables.SuspensionKey(uid)}); err != nil {
				t.Fatal(err)
			}
			if err := local.Publish("weibo.suspensions", []byte(uid.String())); err != nil {
				t.Fatal(err)
			}
			await(listening, false)
		})
	}
}
