package hbase

import (
	"context"
	"strings"
)

// WithNamespace returns a Store that keeps the tables of namespace from in
// namespace to instead: every request naming "from:t" goes to "to:t", and
// EnsureTables(from, ...) creates them in to. It lets one HBase cluster hold
// several independent copies of the weibo tables (a staging copy, or tests
// that must not see each other's data) without the domain knowing.
func WithNamespace(st Store, from, to string) Store {
	if from == to {
		return st
	}
	return &renamed{Store: st, from: from + ":", to: to + ":", fromNS: from, toNS: to}
}

type renamed struct {
	Store
	from, to     string // with the ':' separator
	fromNS, toNS string
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
	if ns == r.fromNS {
		ns = r.toNS
	}
	return r.Store.EnsureTables(ctx, ns, t)
}

func (r *renamed) Get(ctx context.Context, g *Get) (*Result, error) {
	return r.Store.Get(ctx, r.get(g))
}

func (r *renamed) GetMany(ctx context.Context, gets []*Get) ([]*Result, error) {
	out := make([]*Get, len(gets))
	for i, g := range gets {
		out[i] = r.get(g)
	}
	return r.Store.GetMany(ctx, out)
}

func (r *renamed) Put(ctx context.Context, p *Put) error { return r.Store.Put(ctx, r.put(p)) }

func (r *renamed) PutMany(ctx context.Context, puts []*Put) error {
	out := make([]*Put, len(puts))
	for i, p := range puts {
		out[i] = r.put(p)
	}
	return r.Store.PutMany(ctx, out)
}

func (r *renamed) Delete(ctx context.Context, d *Delete) error { return r.Store.Delete(ctx, r.del(d)) }

func (r *renamed) DeleteMany(ctx context.Context, dels []*Delete) error {
	out := make([]*Delete, len(dels))
	for i, d := range dels {
		out[i] = r.del(d)
	}
	return r.Store.DeleteMany(ctx, out)
}

func (r *renamed) Scan(ctx context.Context, s *Scan, fn func(*Result) error) error {
	c := *s
	c.Table = r.table(s.Table)
	return r.Store.Scan(ctx, &c, fn)
}

func (r *renamed) CheckAndPut(ctx context.Context, p *Put, f, q string, exp []byte) (bool, error) {
	return r.Store.CheckAndPut(ctx, r.put(p), f, q, exp)
}

func (r *renamed) CheckAndDelete(ctx context.Context, d *Delete, f, q string, exp []byte) (bool, error) {
	return r.Store.CheckAndDelete(ctx, r.del(d), f, q, exp)
}

func (r *renamed) Increment(ctx context.Context, inc *Increment) (int64, error) {
	c := *inc
	c.Table = r.table(inc.Table)
	return r.Store.Increment(ctx, &c)
}
