package org

import (
	"slices"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The department model (package department keeps the tree, package
// membership a user's department).

// MaxDepartmentNameLength is the longest department name, in characters.
const MaxDepartmentNameLength = 64

// MaxDepartmentDepth is the deepest a department may be (a top-level
// department has depth 1). Creates and moves beyond it are refused; reads
// that walk up the tree stop after it.
const MaxDepartmentDepth = 32

// DeptMemberCount is a department's memberCount: its member rows whose
// user's cell o:dp names it. It is kept with Increment in the department
// row (family i) and registered with the protocol by package membership.
const DeptMemberCount counted.CounterKind = "departmentMemberCount"

// Department is one department row.
type Department struct {
	// ID is the department's id.
	ID weibo.DeptID
	// Name is the department's name.
	Name string
	// Parent is the parent's id, RootDept for a top-level department.
	Parent weibo.DeptID
	// CreatedAt is the creation time.
	CreatedAt time.Time
	// MemberCount is the number of users directly in the department (a
	// kept counter: memberCount).
	MemberCount int64

	// Path is the department's ancestors as its row keeps them, top level
	// first: a copy of the chain of parents, to be checked with
	// VerifyChain before use. HasPath is false when the row keeps none.
	Path    []weibo.DeptID
	HasPath bool

	// ExternalID is the provisioning client's id of the department (SCIM
	// externalId, case exact), "" when none.
	ExternalID string
	// ProvisionedBy is the name of the provisioning client that created
	// the department or first changed it through SCIM, "" when none did.
	ProvisionedBy string
}

// NodeID returns d's global id.
func (d *Department) NodeID() weibo.NodeID { return DeptNode(d.ID) }

// DepartmentEdge is one edge of a DepartmentConnection.
type DepartmentEdge struct {
	// Department is the edge's department.
	Department *Department
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// DepartmentConnection is one page of departments (a department's children
// or the top level), by id (creation order).
type DepartmentConnection struct {
	// Edges are the page's departments.
	Edges []DepartmentEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
}

// DepartmentFromRow decodes department did from its weibo:departments row
// r (family i); nil when the row has no name (the department does not
// exist).
func DepartmentFromRow(did weibo.DeptID, r *hbase.Result) *Department {
	name := r.Value(tables.FamInfo, tables.ColDeptName)
	if name == nil {
		return nil
	}
	path, ok := tables.DepartmentPath(r)
	return &Department{
		ID:          did,
		Name:        string(name),
		Parent:      tables.DepartmentParent(r),
		CreatedAt:   time.UnixMilli(tables.CreatedAt(r)),
		MemberCount: tables.CounterIn(r, tables.FamInfo, tables.ColDeptMemberCount),
		Path:        path,
		HasPath:     ok,

		ExternalID:    string(r.Value(tables.FamInfo, tables.ColExternalID)),
		ProvisionedBy: string(r.Value(tables.FamInfo, tables.ColProvisionedBy)),
	}
}

// VerifyChain reports whether up, read for d's path, is d's chain of
// parents: every row exists, the first is at the top level, each one's
// parent is the one before it, and the last is d's parent.
func VerifyChain(d *Department, up []*Department) bool {
	if len(up) == 0 || up[len(up)-1] == nil || up[len(up)-1].ID != d.Parent {
		return false
	}
	parent := weibo.RootDept
	for _, a := range up {
		if a == nil || a.Parent != parent {
			return false
		}
		parent = a.ID
	}
	return true
}

// IDsOf returns the ids of ds.
func IDsOf(ds []*Department) []weibo.DeptID {
	out := make([]weibo.DeptID, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// ManagedIn returns the departments a weibo:users row's family o says its
// user manages, by id.
func ManagedIn(r *hbase.Result) []weibo.DeptID {
	var out []weibo.DeptID
	for _, c := range r.Family(tables.FamOrg) {
		if did, ok := tables.DecodeManagerQualifier(c.Qualifier); ok {
			out = append(out, did)
		}
	}
	slices.Sort(out)
	return out
}
