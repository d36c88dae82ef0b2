// Package provision is what a company's identity provider provisions
// through SCIM 2.0 (the HTTP layer is package server/scim): users, with a
// login name of their own beside the social username, their SCIM
// attributes, their deactivation (a suspension) and their closing; and
// groups, which are the organisation's departments and roles, with their
// members.
//
// # Users
//
// A SCIM userName is 1 to 128 printable characters (account.ValidLoginName),
// unique ignoring case among every login name and username: each has one
// weibo:usernames row, its lower case, naming the user. A userName that
// fits the username rule (3–32 of A-Z a-z 0-9 _) is the username itself
// and the users row keeps no login name; any other is a login name
// (tables.ColLoginName) and the user gets a social username derived from
// it (DeriveUsername): the part before '@', each run of characters
// outside [A-Za-z0-9_] turned into one '_', trimmed of '_', cut to 24
// characters, prefixed with 'u' up to 3 when shorter
// ("test.user@okta.local" → "test_user"); when that is taken "_2" to
// "_99" are appended, then "_" and 6 hex digits of the SHA-256 of the
// userName. Usernames never change; a login-name change claims the new
// name's row, writes the users row, then deletes the old name's row.
// Either name logs in (account.Service.Login).
//
// A create writes, in order (crash-safe; package account's
// CreateProvisioned): the id; the registration's pending row; the users
// row, every cell; the username's row with CheckAndPut (a lost claim takes
// the next candidate); the login name's row with CheckAndPut, the
// authority (lost: the username's row and the users row are deleted,
// USERNAME_TAKEN); the externalId index row and the managed row in
// weibo:scim (which carries the audit event's proof); the user count; the
// pending row's delete. The fsck check (check.go) finds and repairs what
// a crash leaves.
//
// active false is a suspension until lifted (package suspend), with the
// reason "deactivated by SCIM client NAME": the user's tokens end at
// once and login refuses; active true lifts it. A delete closes the
// account (tables.ColClosedAt): it is suspended for good ("account closed
// by SCIM client NAME"), its roles are revoked and its department left
// (counted writes), its managed and index rows deleted; SCIM answers
// NOT_FOUND for it from then on, and its usernames stay taken.
//
// # Groups
//
// A group is a department (package department, members through package
// membership: adding a user to a department moves them there, since a
// user is in at most one; removing them leaves it, only when they are in
// it) or a role (package role: members are assignments with the group's
// priority, tables.ColScimPriority, 1–1000, default 1; changing the
// priority assigns the current members again with it). Every member
// change is one counted write of the existing relations, so the
// counters stay exact.
//
// # Versions, rank, audit
//
// Every SCIM write of a row's cells is a CheckAndPut on its version
// (tables.ColScimVersion, the value read or absent) writing the next
// version; a call that names a version (If-Match) other than the one read
// fails with VERSION_MISMATCH before any write. A group's member changes
// Increment its version. A client acts with the standing
// org.Standing{Rank: its rank, Perms: every permission but ADMINISTRATOR}
// under the rank rule (package authz): it acts only on users ranked below
// it, assigns only priorities below its rank, and never touches a role
// granting ADMINISTRATOR; a request is checked whole before any write. Every
// change is recorded in the audit log with the client's name and no
// actor.
//
// Errors are *weibo.Error values: BAD_USER_INPUT (Field the SCIM
// attribute; reasons USERNAME_TAKEN, ROLE_NAME_TAKEN, VERSION_MISMATCH,
// IMMUTABLE, DEPARTMENT_*), NOT_FOUND, FORBIDDEN; any other error is the
// store's.
package provision

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/org/authz"
	"github.com/weibohbase/gateway/weibo/org/department"
	"github.com/weibohbase/gateway/weibo/org/membership"
	"github.com/weibohbase/gateway/weibo/org/role"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Client is who provisions: the SCIM client's name and rank
// (clients.Client's).
type Client struct {
	Name string
	Rank int
}

// GroupKind tells a department group from a role group.
type GroupKind string

// The kinds of groups.
const (
	KindDepartment GroupKind = "department"
	KindRole       GroupKind = "role"
)

// GroupRef is a group a user is in (the user's read-only "groups").
type GroupRef struct {
	// ID is the group's id, "department:N" or "role:N" (weibo.NodeID.String).
	ID string
	// Display is the department's or role's name.
	Display string
	// Kind is the group's kind.
	Kind GroupKind
}

// User is a user as SCIM shows it.
type User struct {
	// ID is the user's id.
	ID weibo.UserID
	// UserName is the login name (tables.ColLoginName), else the username.
	UserName string
	// Username is the social username (3–32 of [A-Za-z0-9_]).
	Username string
	// ExternalID is the client's id of the user, "" when none.
	ExternalID string
	// DisplayName is the profile's display name, "" when none.
	DisplayName string
	// Attrs are the other SCIM attributes.
	Attrs tables.ScimAttrs
	// Active is false while the user is suspended.
	Active bool
	// Groups are the user's department first, then their roles by id.
	Groups []GroupRef
	// Created is the user's creation time.
	Created time.Time
	// Modified is when SCIM last changed the user (Created when never).
	Modified time.Time
	// Version is the SCIM version; meta.version is W/"<Version>".
	Version int64
	// ProvisionedBy is the client that created or first changed the
	// user through SCIM, "" for none.
	ProvisionedBy string
}

// UserInput is everything a client sets of a user (create, replace; a
// PATCH is applied by the HTTP layer to the read user and sent as a
// replace with the version it read).
type UserInput struct {
	UserName, ExternalID, DisplayName string
	Attrs                             tables.ScimAttrs
	Active                            bool
	// Password is the new password; "": none on create (a random one
	// nobody knows), unchanged on replace.
	Password string
}

// Member is a member of a group.
type Member struct {
	ID      weibo.UserID
	Display string // the username
}

// Group is a department or role as SCIM shows it.
type Group struct {
	// ID is "department:N" or "role:N".
	ID   string
	Kind GroupKind
	// DisplayName is the department's or role's name.
	DisplayName string
	ExternalID  string
	// Parent is a department's parent, "department:N", or "" at the top
	// level; "" for a role.
	Parent string
	// Priority is the priority a role's members get (1..1000); 0 for a
	// department.
	Priority int
	// Members are the members by user id, at most MaxGroupMembers, only
	// when asked for; MembersTruncated says there are more.
	Members          []Member
	MembersTruncated bool
	Created          time.Time
	Modified         time.Time
	Version          int64
	ProvisionedBy    string
}

// GroupInput is everything a client sets of a group (create, replace).
type GroupInput struct {
	Kind                            GroupKind
	DisplayName, ExternalID, Parent string
	// Priority is a role's priority, 0 for the default (1).
	Priority int
	Members  []weibo.UserID
}

// GroupChange is a PATCH of a group: nil fields are unchanged.
type GroupChange struct {
	DisplayName, ExternalID, Parent *string
	Priority                        *int
	Add, Remove                     []weibo.UserID
	// RemoveAll removes every member not in Add ("remove" of path
	// "members" without a value, or "replace" of members).
	RemoveAll bool
}

// Limits of reads.
const (
	// MaxGroupMembers is the most members a group read returns.
	MaxGroupMembers = 10000
	// MaxScan is the most managed users a filtered list may evaluate.
	MaxScan = 10000
	// MaxExternalIDBytes is the longest externalId, in bytes.
	MaxExternalIDBytes = 1024
	// DefaultPriority is a role group's priority when none is given.
	DefaultPriority = 1
)

// The audit actions of provisioning besides the organisation's and the
// suspensions'.
const (
	ActionProvision = "user.provision"
	ActionUpdate    = "user.update"
	ActionClose     = "user.close"
)

// Steps of provisioning's writes, passed to the protocol's step hook
// (counted.WithStepHook), besides those of the services it calls.
const (
	// StepUsersRow follows a create's users row (account).
	StepUsersRow = account.StepProvisionRow
	// StepUsername follows a create's username row, before its login
	// name's (account).
	StepUsername = account.StepProvisionUsername
	// StepIndexed follows the externalId index row of a create or change,
	// before the row that refers to it is written.
	StepIndexed = "provision:indexed"
	// StepManaged follows a create's managed row (the user exists whole),
	// before the user count.
	StepManaged = "provision:managed"
	// StepLoginClaimed follows the claim of a changed login name's row,
	// before the users row's write.
	StepLoginClaimed = "provision:login-claimed"
	// StepWritten follows a change's versioned write of the row's cells,
	// before the rows it leaves behind are deleted.
	StepWritten = "provision:written"
	// StepClosed follows a close's write of the users row, before the
	// suspension, the roles' revokes and the department's leave.
	StepClosed = "provision:closed"
	// StepMembers follows a group's member changes, before the version's
	// Increment.
	StepMembers = "provision:members"
)

// Steps lists every step of provisioning's own, for the crash tests.
var Steps = []string{StepUsersRow, StepUsername, account.StepDecided, StepIndexed, StepManaged,
	StepLoginClaimed, StepWritten, StepClosed, StepMembers}

// Parts are the services provisioning writes through.
type Parts struct {
	Accounts    *account.Service
	Roles       *role.Service
	Departments *department.Service
	Members     *membership.Service
	Authz       *authz.Service
	Suspensions *suspend.Service
	Audit       *org.Recorder
}

// Service provisions users and groups. It is safe for concurrent use.
type Service struct {
	st hbase.Store
	w  *counted.Protocol
	Parts
}

// New returns the provisioning over st, on w's clock and step hook,
// through parts, and registers its fsck check with w.
func New(st hbase.Store, w *counted.Protocol, parts Parts) *Service {
	s := &Service{st: st, w: w, Parts: parts}
	w.RegisterCheck(s.fsckCheck())
	return s
}

// standing is what client c acts with: its rank and every permission but
// ADMINISTRATOR.
func standing(c Client) org.Standing {
	var perms org.PermSet
	for _, p := range org.Permissions {
		if p != org.PermAdministrator {
			ps, _ := org.PermsOf("", []org.Permission{p})
			perms |= ps
		}
	}
	return org.Standing{Rank: c.Rank, Perms: perms}
}

// clientContext is ctx carrying c as the audit log's client.
func clientContext(ctx context.Context, c Client) context.Context {
	return audit.WithClient(ctx, c.Name)
}

// errVersion is VERSION_MISMATCH.
func errVersion(read int64) error {
	return weibo.BadReason("version", weibo.ReasonVersionMismatch, "the object changed: its version is "+itoa(read))
}

// checkVersion is VERSION_MISMATCH when ifVersion names another version
// than read.
func checkVersion(ifVersion *int64, read int64) error {
	if ifVersion != nil && *ifVersion != read {
		return errVersion(read)
	}
	return nil
}

// versionOf is the SCIM version of a row read with family i: the raw
// cell (nil: absent) and its value.
func versionOf(r *hbase.Result) ([]byte, int64) {
	raw := r.Value(tables.FamInfo, tables.ColScimVersion)
	return raw, int64(tables.DecodeU64(raw))
}

// modifiedOf is when SCIM last changed a row read with family i, its
// creation time when never.
func modifiedOf(r *hbase.Result) time.Time {
	if v := r.Value(tables.FamInfo, tables.ColScimModified); len(v) == 8 {
		return time.UnixMilli(int64(tables.DecodeU64(v)))
	}
	return time.UnixMilli(tables.CreatedAt(r))
}

// text is the string of a cell of family i, "" when absent or empty.
func text(r *hbase.Result, q string) string { return string(r.Value(tables.FamInfo, q)) }
