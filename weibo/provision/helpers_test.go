package provision_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/tables"
)

// okta is the client most tests provision as: the default rank.
var okta = provision.Client{Name: "okta", Rank: 500}

// fixture builds, on backend b, a store of the test's own (fsck sees only
// its rows), a started domain over it with a fault hook, and returns them.
func fixture(t *testing.T, b testenv.Backend) (*domain.Domain, *domaintest.Faults) {
	t.Helper()
	st := b.OpenOwn(t, tables.Namespace, "prov")
	f := domaintest.NewFaults()
	d := domaintest.Service(t, st, domain.WithStepHook(f.Hook))
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d, f
}

// eachBackend runs fn on each backend as a subtest.
func eachBackend(t *testing.T, fn func(t *testing.T, d *domain.Domain, f *domaintest.Faults)) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			d, f := fixture(t, b)
			fn(t, d, f)
		})
	}
}

// cleanFsck fails t unless a check-only fsck of d finds nothing.
func cleanFsck(t *testing.T, d *domain.Domain) {
	t.Helper()
	rep, err := fsck.Run(t.Context(), d, fsck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) > 0 {
		t.Errorf("fsck: %v %+v", rep.Counts(), rep.Issues)
	}
}

// repairFsck runs a repairing fsck of d, fails t for what it leaves, then
// requires a clean one.
func repairFsck(t *testing.T, d *domain.Domain) *fsck.Report {
	t.Helper()
	rep, err := fsck.Run(t.Context(), d, fsck.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Unrepaired(); n > 0 {
		t.Errorf("repair left %d: %+v", n, rep.Issues)
	}
	cleanFsck(t, d)
	return rep
}

// code is err's weibo code and reason, "" for none.
func code(err error) string {
	e, ok := errors.AsType[*weibo.Error](err)
	if !ok {
		if err != nil {
			return "other: " + err.Error()
		}
		return ""
	}
	if e.Reason != "" {
		return e.Code + "/" + e.Reason
	}
	return e.Code
}

// must returns v, panicking (failing the test) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
