package org

import (
	"strconv"

	"github.com/weibohbase/gateway/weibo"
)

// The org's errors, all *weibo.Error values with the codes and reasons of
// package weibo.

func errRoleNameTaken(name string) error {
	return weibo.BadReason("name", weibo.ReasonRoleNameTaken, "a role named "+strconv.Quote(name)+" exists")
}

func errForbidden(roleName string) error {
	return weibo.Forbidden("this operation requires the role " + strconv.Quote(roleName))
}

func errDeptNotFound(field string, did weibo.DeptID) error {
	return weibo.NotFoundOn(field, "department "+did.String()+" not found")
}

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

func errConcurrent(field, message string) error {
	return weibo.BadReason(field, weibo.ReasonConcurrentUpdate, message)
}
