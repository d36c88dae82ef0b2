package weibo

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Every error the domain (packages feed and org) returns to an API caller
// is an *Error with one of the codes below, and where callers branch on
// it, a reason. They are all defined in this file; the GraphQL layer copies
// Code to extensions.code and Reason to extensions.reason. Any other error
// is an internal (store) failure, wrapped with the operation it served.

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
	// CodeSlowConsumer: a subscription's client fell behind its bounded
	// queue; the subscription was closed (resume it with `after`).
	CodeSlowConsumer = "SLOW_CONSUMER"
	// CodeUnavailable: a dependency of the operation is away; retrying
	// later may succeed (a live subscription: resume it with `after`).
	CodeUnavailable = "UNAVAILABLE"
	// CodeAccountSuspended: login of a suspended user; extensions.until is
	// the suspension's end (RFC 3339), absent when it lasts until lifted.
	CodeAccountSuspended = "ACCOUNT_SUSPENDED"
	// CodePayloadTooLarge: an uploaded file is over its byte or pixel
	// limit (Field names the argument); the server's own refusal of a
	// body over --max-body-bytes uses the same code.
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
)

// Reasons refine a code (extensions.reason in GraphQL). All but
// ReasonEventsInterrupted come with CodeBadUserInput.
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
	// ReasonEventsInterrupted (with CodeUnavailable): the event bus lost
	// its connection, so a live subscription may have missed events; it
	// was closed, to be resumed with `after`.
	ReasonEventsInterrupted = "EVENTS_INTERRUPTED"
	// ReasonAccountSuspended (with CodeUnauthenticated): the token's user
	// is suspended.
	ReasonAccountSuspended = "ACCOUNT_SUSPENDED"
	// ReasonVersionMismatch: a SCIM change named the version of the
	// object it read (If-Match) and the object's version is another now.
	ReasonVersionMismatch = "VERSION_MISMATCH"
	// ReasonImmutable: a SCIM change of an attribute that never changes
	// (a group's kind).
	ReasonImmutable = "IMMUTABLE"
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
	// Extensions are more entries of the GraphQL error's extensions
	// (CodeAccountSuspended's "until"), nil for none.
	Extensions map[string]any
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

// BadInput returns a BAD_USER_INPUT *Error on the argument field, its
// message formatted from format and args.
func BadInput(field, format string, args ...any) error {
	return &Error{Code: CodeBadUserInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

// BadReason returns a BAD_USER_INPUT *Error on field with a reason (one of
// the Reason* constants).
func BadReason(field, reason, message string) error {
	return &Error{Code: CodeBadUserInput, Field: field, Reason: reason, Message: message}
}

// NotFound returns a NOT_FOUND *Error, its message formatted from format
// and args.
func NotFound(format string, args ...any) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// NotFoundOn returns a NOT_FOUND *Error on the argument field.
func NotFoundOn(field, message string) error {
	return &Error{Code: CodeNotFound, Field: field, Message: message}
}

// Forbidden returns a FORBIDDEN *Error.
func Forbidden(message string) error {
	return &Error{Code: CodeForbidden, Message: message}
}

// excerptBytes is how much of an input an error message quotes.
const excerptBytes = 32

// Excerpt quotes s for an error message: at most its first 32 bytes (cut
// on a character boundary; invalid UTF-8 shown as escapes), followed by
// "…" and its length in bytes when it is longer. No error message quotes
// more of a caller's input.
func Excerpt(s string) string {
	if len(s) <= excerptBytes {
		return strconv.Quote(s)
	}
	cut := excerptBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Wrap prefixes *err, when it is not nil, with the operation it served:
// the business areas' entry points start with
//
//	defer weibo.Wrap(&err, "home timeline")
//
// so that a failed store call says which operation it failed. The edge
// still finds an *Error inside (errors.As) and shows only its Message.
func Wrap(err *error, op string) {
	if *err != nil {
		*err = fmt.Errorf("%s: %w", op, *err)
	}
}

// Wrapf is Wrap with the operation formatted from format and args (ids of
// the write): for writes, whose arguments are worth the formatting.
func Wrapf(err *error, format string, args ...any) {
	if *err != nil {
		*err = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *err)
	}
}
