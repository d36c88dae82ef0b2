package weibo

import (
	"errors"
	"fmt"
)

// Error codes, the values of a GraphQL error's extensions.code.
const (
	CodeBadUserInput    = "BAD_USER_INPUT"
	CodeNotFound        = "NOT_FOUND"
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
)

// Reasons refine a code (extensions.reason in GraphQL).
const (
	// ReasonUsernameTaken: register with a username that exists (code BAD_USER_INPUT).
	ReasonUsernameTaken = "USERNAME_TAKEN"
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

func badInput(field, format string, args ...any) error {
	return &Error{Code: CodeBadUserInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// ErrUnauthenticated is returned when an operation needs a logged-in viewer.
var ErrUnauthenticated = &Error{Code: CodeUnauthenticated, Message: "authentication required: send Authorization: Bearer <token>"}

// CodeOf returns the Code of err when it is (or wraps) an *Error, or "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
