package domain

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// searchSuspended is SearchUsers for {suspended: true} without a role or
// department to drive it: the suspended users come from the registry of
// suspensions (memory, a few users), read with one GetMany of their users
// rows, and are paged in username order with the usernames' cursors, as
// the unfiltered search pages — rather than scanning every username for
// the few suspended.
func (d *Domain) searchSuspended(ctx context.Context, f UserFilter, prefix string, q paging.Query, first *int, after *string) (*UserSearchConnection, error) {
	n, start, err := q.Start(first, after)
	if err != nil {
		return nil, err
	}
	uids := d.Suspensions.SuspendedUsers()
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo, tables.FamOrg}}
	}
	rs, err := d.Store().GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	type found struct {
		uid weibo.UserID
		key []byte
	}
	var all []found
	for i, r := range rs {
		name := r.Value(tables.FamInfo, tables.ColUsername)
		switch {
		case name == nil:
			continue
		case prefix != "" && !strings.HasPrefix(strings.ToLower(string(name)), prefix):
			continue
		case f.WithoutDepartment && tables.UserDepartment(r) != weibo.RootDept:
			continue
		}
		k := tables.UsernameKey(string(name))
		if start != nil && bytes.Compare(k, start) < 0 { // at or before the after cursor
			continue
		}
		all = append(all, found{uids[i], k})
	}
	slices.SortFunc(all, func(a, b found) int { return bytes.Compare(a.key, b.key) })
	all = all[:min(len(all), n+1)]
	items := make([]*weibo.UserID, len(all))
	keys := make([][]byte, len(all))
	for i := range all {
		items[i], keys[i] = &all[i].uid, all[i].key
	}
	edges, info := paging.Build(items, keys, n, func(dst, key []byte) []byte {
		return paging.AppendCursor(dst, q.Kind, key[len(q.Scan.Prefix):])
	}, weibo.NewUserEdge)
	return &UserSearchConnection{Edges: edges, PageInfo: info}, nil
}
