package department

import "github.com/weibohbase/gateway/weibo"

// The tree's own errors, *weibo.Error values with the codes and reasons of
// package weibo (package org has those the parts share).

func errCycle() error {
	return weibo.BadReason("parentId", weibo.ReasonDepartmentCycle,
		"a department cannot be moved under itself or one of its sub-departments")
}

func errTooDeep(message string) error {
	return weibo.BadReason("parentId", weibo.ReasonDepartmentTooDeep, message)
}

func errNotEmpty(did weibo.DeptID) error {
	return weibo.BadReason("id", weibo.ReasonDepartmentNotEmpty,
		"department "+did.String()+" has sub-departments or members; pass cascade: true to delete them too")
}
