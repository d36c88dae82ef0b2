// Package org is the organisation of seed 001: roles with priorities
// (users ↔ roles, many to many), the department tree and its members, and
// authorization from the role table (HasRole, RequireRole: the schema's
// @hasRole). Its one counted relation — a role assignment (memberCount) —
// is written on package counted's protocol and registered with it by New;
// its other two-row changes (role names, the tree, memberships) follow the
// write orders of pairs.go.
//
// One file per concern: roles.go, departments.go, pairs.go (the two-row
// changes without a counter), counted.go (the registered relation and
// counter, the settle and recount), names.go (name rules), errors.go.
//
// Errors meant for API callers are *weibo.Error values; every other error
// is an internal store failure, wrapped with the operation it served.
package org

import (
	"context"
	"log/slog"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/counted"
)

// Users is what the organisation reads of the accounts, which another
// business area keeps (package feed's Service implements it).
type Users interface {
	// GetUsers reads users by id in one batch: one entry per id, nil where
	// the user does not exist.
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// Service is the organisation's API. It is safe for concurrent use.
type Service struct {
	st      hbase.Store
	w       *counted.Protocol
	log     *slog.Logger
	users   Users
	roles   *counted.Relation // the role assignment, registered with w
	members *counted.Relation // department membership, registered with w
	audit   *audit.Log        // the admin audit log (audit.go)
}

// New returns the organisation over st, reading accounts through users,
// writing its counted relation on w (whose clock and logger it uses) and
// registering it there. The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users Users) *Service {
	s := &Service{st: st, w: w, log: w.Logger(), users: users, audit: audit.New(st, w.Now)}
	s.register()
	return s
}

// Store returns the table API the organisation runs on.
func (s *Service) Store() hbase.Store { return s.st }

func (s *Service) nowMillis() int64 { return s.w.NowMillis() }

// existingUser reads user uid; NOT_FOUND when there is none.
func (s *Service) existingUser(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
	us, err := s.users.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, weibo.NotFound("user %s not found", uid)
	}
	return us[0], nil
}

// NodeID returns r's global id.
func (r *Role) NodeID() weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeRole, Role: r.ID} }

// NodeID returns d's global id.
func (d *Department) NodeID() weibo.NodeID {
	return weibo.NodeID{Kind: weibo.NodeDepartment, Dept: d.ID}
}
