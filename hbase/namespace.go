package hbase

import (
	"context"
	"strings"
)

// WithNamespace returns a StoreAdmin that keeps the tables of namespace from in
// namespace to instead: every data operation or admin call naming table
// "from:t" goes to "to:t", and EnsureTables(from, ...) and
// DropNamespace(from) act on to. Other tables and namespaces pass through
// unchanged. It lets one HBase cluster hold several independent copies of
// the weibo tables (a staging copy, or tests that must not see each other's
// data) without the domain knowing. With from == to it returns b itself.
func WithNamespace(b StoreAdmin, from, to string) StoreAdmin {
	if from == to {
		return b
	}
	return &renamed{StoreAdmin: b, from: from + ":", to: to + ":", fromNS: from, toNS: to}
}

type renamed struct {
	StoreAdmin
	from, to     string // with the ':' separator
	fromNS, toNS string
}

// Unwrap returns the store whose namespace is mapped.
func (r *renamed) Unwrap() StoreAdmin { return r.StoreAdmin }

// namespace maps a namespace name.
func (r *renamed) namespace(ns string) string {
	if ns == r.fromNS {
		return r.toNS
	}
	return ns
}

func (r *renamed) table(t string) string {
	if rest, ok := strings.CutPrefix(t, r.from); ok {
		return r.to + rest
	}
	return t
}

func (r *renamed) get(g *Get) *Get {
	c := *g
	c.Table = r.table(g.Table)
	return &c
}

func (r *renamed) put(p *Put) *Put {
	c := *p
	c.Table = r.table(p.Table)
	return &c
}

func (r *renamed) del(d *Delete) *Delete {
	c := *d
	c.Table = r.table(d.Table)
	return &c
}

func (r *renamed) EnsureTables(ctx context.Context, ns string, t []TableSpec) error {
	return r.StoreAdmin.EnsureTables(ctx, r.namespace(ns), t)
}

func (r *renamed) DisableTable(ctx context.Context, table string) error {
	return r.StoreAdmin.DisableTable(ctx, r.table(table))
}

func (r *renamed) DeleteTable(ctx context.Context, table string) error {
	return r.StoreAdmin.DeleteTable(ctx, r.table(table))
}

func (r *renamed) DropNamespace(ctx context.Context, ns string) error {
	return r.StoreAdmin.DropNamespace(ctx, r.namespace(ns))
}

func (r *renamed) Get(ctx context.Context, g *Get) (*Result, error) {
	return r.StoreAdmin.Get(ctx, r.get(g))
}

func (r *renamed) GetMany(ctx context.Context, gets []*Get) ([]*Result, error) {
	out := make([]*Get, len(gets))
	for i, g := range gets {
		out[i] = r.get(g)
	}
	return r.StoreAdmin.GetMany(ctx, out)
}

func (r *renamed) Put(ctx context.Context, p *Put) error { return r.StoreAdmin.Put(ctx, r.put(p)) }

func (r *renamed) PutMany(ctx context.Context, puts []*Put) error {
	out := make([]*Put, len(puts))
	for i, p := range puts {
		out[i] = r.put(p)
	}
	return r.StoreAdmin.PutMany(ctx, out)
}

func (r *renamed) Delete(ctx context.Context, d *Delete) error {
	return r.StoreAdmin.Delete(ctx, r.del(d))
}

func (r *renamed) DeleteMany(ctx context.Context, dels []*Delete) error {
	out := make([]*Delete, len(dels))
	for i, d := range dels {
		out[i] = r.del(d)
	}
	return r.StoreAdmin.DeleteMany(ctx, out)
}

func (r *renamed) Scan(ctx context.Context, s *Scan, fn func(*Result) error) error {
	c := *s
	c.Table = r.table(s.Table)
	return r.StoreAdmin.Scan(ctx, &c, fn)
}

func (r *renamed) CheckAndPut(ctx context.Context, p *Put, f, q string, exp []byte) (bool, error) {
	return r.StoreAdmin.CheckAndPut(ctx, r.put(p), f, q, exp)
}

func (r *renamed) MutateRow(ctx context.Context, m *RowMutation) error {
	c := *m
	c.Table = r.table(m.Table)
	return r.StoreAdmin.MutateRow(ctx, &c)
}

func (r *renamed) CheckAndDelete(ctx context.Context, d *Delete, f, q string, exp []byte) (bool, error) {
	return r.StoreAdmin.CheckAndDelete(ctx, r.del(d), f, q, exp)
}

func (r *renamed) Increment(ctx context.Context, inc *Increment) (int64, error) {
	c := *inc
	c.Table = r.table(inc.Table)
	return r.StoreAdmin.Increment(ctx, &c)
}
