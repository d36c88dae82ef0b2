package account

import (
	"bytes"
	"context"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// UserCount is the CounterKind of the number of all users (Query.users'
// totalCount), kept in row tables.UserCountKey of weibo:users.
const UserCount counted.CounterKind = "userCount"

// UserCounter is the one counter of kind UserCount.
var UserCounter = counted.Counter{Kind: UserCount}

// Relation is the registration's name as a counted write; its steps are
// counted.Step(Relation, phase).
const Relation = "register"

// Steps of a registration, passed to the protocol's step hook
// (counted.WithStepHook); the relation declares them.
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)    // after the registration's pending row
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced) // after the user count's operation sequence
	StepDecided   = counted.Step(Relation, counted.PhaseDecided)   // after the usernames row's CheckAndPut
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)   // after the user count's Increment
	StepSettled   = counted.Step(Relation, counted.PhaseSettled)   // before the pending row's delete
)

// registerRelation is the registration of user owner (other 0): authority
// the usernames row naming the user, counter the number of users. It has
// no dependent to settle: the users row is written before the authority,
// and one whose usernames row was never written (a registration that
// died or lost its name) is unreachable and not counted.
func registerRelation() *counted.Relation {
	return &counted.Relation{
		Name:     Relation,
		Marker:   tables.PendingRegister,
		Phases:   []counted.Phase{counted.PhaseDecided},
		Counters: func(_, _ uint64) []counted.Counter { return []counted.Counter{UserCounter} },
		Settle:   func(context.Context, uint64, uint64, []byte) error { return nil },
	}
}

// UserCountSpec is the CounterSpec of the number of users over st: row
// tables.UserCountKey of weibo:users, counted by CountUsers in batches of
// batch rows. Its owner always exists.
func UserCountSpec(st hbase.Store, batch int) *counted.CounterSpec {
	return &counted.CounterSpec{
		Kind: UserCount,
		Cell: func(counted.Counter) (string, []byte, string, string) {
			return tables.Users, tables.UserCountKey, tables.ColUserCount, tables.ColUserCountSeq
		},
		Count: func(ctx context.Context, _ counted.Counter) (int64, bool, error) {
			n, err := CountUsers(ctx, st, batch)
			return n, true, err
		},
	}
}

// RegisterCounted adds the registration's relation and the user count's
// counter to w, whose store is st, and returns the relation. New calls
// it; an importer that writes users itself (package seed) calls it on a
// protocol of its own to recount the users through it. It panics when w
// has them already (counted.Protocol.Register).
func RegisterCounted(st hbase.Store, w *counted.Protocol) *counted.Relation {
	rel := registerRelation()
	w.Register(rel)
	w.RegisterCounter(UserCountSpec(st, w.Batch()))
	return rel
}

// CountUsers counts the users of st: the weibo:usernames rows whose users
// row holds that username (what Query.users lists without a filter),
// reading the usernames table with one scan and the users rows with one
// GetMany per batch rows. Errors are the store's.
func CountUsers(ctx context.Context, st hbase.Store, batch int) (int64, error) {
	batch = max(1, batch)
	var n int64
	var keys [][]byte
	var gets []*hbase.Get
	check := func() error {
		if len(gets) == 0 {
			return nil
		}
		rs, err := st.GetMany(ctx, gets)
		if err != nil {
			return err
		}
		for i, r := range rs {
			if name := r.Value(tables.FamInfo, tables.ColUsername); name != nil && bytes.Equal(tables.UsernameKey(string(name)), keys[i]) {
				n++
			}
		}
		keys, gets = keys[:0], gets[:0]
		return nil
	}
	err := st.Scan(ctx, &hbase.Scan{Table: tables.Usernames}, func(r *hbase.Result) error {
		uid := tables.UsernameUser(r)
		if uid == 0 {
			return nil
		}
		keys = append(keys, bytes.Clone(r.Row))
		gets = append(gets, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo}})
		if len(gets) >= batch {
			return check()
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	if err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// UserCount returns the kept number of all users (row
// tables.UserCountKey): one Get. Errors are the store's.
func (s *Service) UserCount(ctx context.Context) (_ int64, err error) {
	defer weibo.Wrap(&err, "user count")
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserCountKey, Families: []string{tables.FamCount}})
	if err != nil {
		return 0, err
	}
	return tables.CounterIn(r, tables.FamCount, tables.ColUserCount), nil
}
