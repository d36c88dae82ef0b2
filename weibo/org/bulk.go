package org

import "github.com/weibohbase/gateway/weibo"

// The outcome of a bulk change (package bulk makes them).

// MaxBulkUsers is the most users one bulk change takes.
const MaxBulkUsers = 100

// BulkFailure is one user's failure in a bulk change.
type BulkFailure struct {
	// UserID is the user.
	UserID weibo.UserID
	// Code is the error's code (a weibo.Code* constant), or
	// CodeInternal for a store failure.
	Code string
	// Message explains it.
	Message string
}

// CodeInternal is a BulkFailure's code for a failure that is not the
// caller's (the store's); the message then says no more.
const CodeInternal = "INTERNAL_SERVER_ERROR"

// BulkResult is the outcome of a bulk change: each user's change is made on
// its own, and one user's failure does not stop the others.
type BulkResult struct {
	// Succeeded are the users changed (or already as asked), in the order given.
	Succeeded []*weibo.User
	// Failed are the users not changed, in the order given.
	Failed []BulkFailure
}
