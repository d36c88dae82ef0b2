package org

import (
	"strconv"

	"github.com/weibohbase/gateway/weibo"
)

// The org's errors shared by its parts, all *weibo.Error values with the
// codes and reasons of package weibo.

// ErrRoleNameTaken is the BAD_USER_INPUT error (field "name", reason
// ROLE_NAME_TAKEN) of a role name another role has.
func ErrRoleNameTaken(name string) error {
	return weibo.BadReason("name", weibo.ReasonRoleNameTaken, "a role named "+strconv.Quote(name)+" exists")
}

// ErrForbidden is the FORBIDDEN error of a caller without the role named
// roleName.
func ErrForbidden(roleName string) error {
	return weibo.Forbidden("this operation requires the role " + strconv.Quote(roleName))
}

// ErrDeptNotFound is the NOT_FOUND error, on field, of an unknown
// department did.
func ErrDeptNotFound(field string, did weibo.DeptID) error {
	return weibo.NotFoundOn(field, "department "+did.String()+" not found")
}

// ErrConcurrent is the BAD_USER_INPUT error (reason CONCURRENT_UPDATE), on
// field, of a change that kept meeting concurrent ones.
func ErrConcurrent(field, message string) error {
	return weibo.BadReason(field, weibo.ReasonConcurrentUpdate, message)
}
