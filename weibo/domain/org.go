package domain

import (
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/org/authz"
	"github.com/weibohbase/gateway/weibo/org/bulk"
	"github.com/weibohbase/gateway/weibo/org/department"
	"github.com/weibohbase/gateway/weibo/org/membership"
	"github.com/weibohbase/gateway/weibo/org/role"
)

// Org is the organisation, one part per capability (package org and its
// subpackages), wired over one store and protocol. Its parts are safe for
// concurrent use.
type Org struct {
	// Roles keeps roles, their names and assignments.
	Roles *role.Service
	// Departments keeps the department tree and its managers.
	Departments *department.Service
	// Members keeps which department each user belongs to.
	Members *membership.Service
	// Authz authorizes callers: @hasRole and the admin or manager check.
	Authz *authz.Service
	// Bulk makes the bulk changes of roles and memberships.
	Bulk *bulk.Service
	// Audit records the changes and pages through the audit log.
	Audit *org.Recorder
}

// newOrg wires the organisation over st, reading accounts through users
// and registering its counted relations with w.
func newOrg(st hbase.Store, w *counted.Protocol, users org.Users) *Org {
	rec := org.NewRecorder(st, w)
	o := &Org{Audit: rec}
	o.Roles = role.New(st, w, users, rec)
	o.Departments = department.New(st, w, users, rec)
	o.Members = membership.New(st, w, users, o.Departments, rec)
	o.Authz = authz.New(st, o.Departments)
	o.Bulk = bulk.New(w.Logger(), o.Roles, o.Departments, o.Members, o.Authz)
	return o
}
