package weibo

import (
	"errors"
	"fmt"
	"strconv"
)

// Every error this package returns to an API caller is an *Error with one
// of the codes below, and where callers branch on it, a reason. They are
// all defined in this file; the GraphQL layer copies Code to
// extensions.code and Reason to extensions.reason.

// Error codes, the values of a GraphQL error's extensions.code.
const (
	// CodeBadUserInput: an argument is invalid (Field names it).
	CodeBadUserInput = "BAD_USER_INPUT"
	// CodeNotFound: a user, post, role or department named by an argument does not exist.
	CodeNotFound = "NOT_FOUND"
	// CodeUnauthenticated: the operation needs a logged-in viewer, or a login failed.
	CodeUnauthenticated = "UNAUTHENTICATED"
	// CodeForbidden: the viewer lacks the role the operation requires.
	CodeForbidden = "FORBIDDEN"
)

// Reasons refine a code (extensions.reason in GraphQL). All come with
// CodeBadUserInput.
const (
	// ReasonUsernameTaken: register with a username that exists, ignoring case.
	ReasonUsernameTaken = "USERNAME_TAKEN"
	// ReasonRoleNameTaken: createRole or renameRole with a name another role
	// has, ignoring case.
	ReasonRoleNameTaken = "ROLE_NAME_TAKEN"
	// ReasonConcurrentUpdate: the row changed between the read and the
	// conditional write of a mutation; retrying it is safe.
	ReasonConcurrentUpdate = "CONCURRENT_UPDATE"
	// ReasonDepartmentCycle: moveDepartment under itself or a descendant.
	ReasonDepartmentCycle = "DEPARTMENT_CYCLE"
	// ReasonDepartmentNotEmpty: deleteDepartment without cascade of a
	// department that has sub-departments or members.
	ReasonDepartmentNotEmpty = "DEPARTMENT_NOT_EMPTY"
	// ReasonDepartmentTooDeep: a create or move beyond MaxDepartmentDepth.
	ReasonDepartmentTooDeep = "DEPARTMENT_TOO_DEEP"
)

// Error is a domain error meant for the API caller: Code is one of the Code*
// constants and Message is safe to show. Any other error returned by this
// package is an internal (store) failure.
type Error struct {
	// Code classifies the error (extensions.code in GraphQL).
	Code string
	// Message explains it to the caller.
	Message string
	// Field names the argument at fault, when there is one.
	Field string
	// Reason refines Code for callers that branch on it (Reason* constants), or "".
	Reason string
}

func (e *Error) Error() string { return e.Message }

// CodeOf returns the Code of err when it is (or wraps) an *Error, or "".
func CodeOf(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}

// ErrUnauthenticated is returned when an operation needs a logged-in viewer.
var ErrUnauthenticated = &Error{Code: CodeUnauthenticated, Message: "authentication required: send Authorization: Bearer <token>"}

// errBadLogin is Login's answer for an unknown user and a wrong password alike.
var errBadLogin = &Error{Code: CodeUnauthenticated, Message: "wrong username or password"}

func badInput(field, format string, args ...any) error {
	return &Error{Code: CodeBadUserInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

// badReason is a BAD_USER_INPUT error with a reason.
func badReason(field, reason, message string) error {
	return &Error{Code: CodeBadUserInput, Field: field, Reason: reason, Message: message}
}

func notFound(format string, args ...any) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func errTaken(username string) error {
	return badReason("username", ReasonUsernameTaken, "username "+username+" is taken")
}

func errRoleNameTaken(name string) error {
	return badReason("name", ReasonRoleNameTaken, "a role named "+strconv.Quote(name)+" exists")
}

func errForbidden(roleName string) error {
	return &Error{Code: CodeForbidden, Message: "this operation requires the role " + strconv.Quote(roleName)}
}

func errDeptNotFound(field string, did DeptID) error {
	return &Error{Code: CodeNotFound, Field: field, Message: "department " + did.String() + " not found"}
}

func errCycle() error {
	return badReason("parentId", ReasonDepartmentCycle,
		"a department cannot be moved under itself or one of its sub-departments")
}

func errTooDeep(message string) error {
	return badReason("parentId", ReasonDepartmentTooDeep, message)
}

func errNotEmpty(did DeptID) error {
	return badReason("id", ReasonDepartmentNotEmpty,
		"department "+did.String()+" has sub-departments or members; pass cascade: true to delete them too")
}

func errConcurrent(field, message string) error {
	return badReason(field, ReasonConcurrentUpdate, message)
}
