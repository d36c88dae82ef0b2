package tables

import (
	"bytes"
	"encoding/binary"
)

// --- SCIM provisioning -------------------------------------------------------
//
// What the company's identity provider provisions through /scim/v2
// (package weibo/provision) lives on the rows it describes: a user's
// login name, externalId, SCIM attributes and version on the users row
// (family i), a department's or role's externalId and version on its row
// (family i). Table weibo:scim holds what is read across rows: the users
// SCIM manages (the list /Users pages through), the externalId index
// (filter `externalId eq "…"`), and the provisioning clients with their
// tokens' hashes.

// Scim holds the SCIM index rows and the provisioning clients. Not salted
// and not pre-split: the managed users are listed in id order, one
// contiguous range, and the clients are few.
const Scim = Namespace + ":scim"

// Qualifiers of family i on weibo:users (a provisioned user).
const (
	// ColLoginName (users, i) is the SCIM userName as given, UTF-8, up to
	// 128 printable characters; absent when the user's login name is the
	// username itself. Its lower case is a weibo:usernames row naming the
	// user, like the username's: either logs in.
	ColLoginName = "ln"
	// ColExternalID (users, departments and roles, i) is the externalId
	// the provisioning client gave, UTF-8 (case exact); absent when none.
	ColExternalID = "xi"
	// ColProvisionedBy (users, departments and roles, i) is the name of
	// the provisioning client that created the object or first changed it
	// through SCIM, UTF-8; absent for an object SCIM never touched.
	ColProvisionedBy = "pb"
	// ColScimAttrs (users, i) is the user's other SCIM attributes as
	// compact JSON (ScimAttrs); absent when none.
	ColScimAttrs = "sa"
	// ColScimModified (users, departments and roles, i) is when SCIM last
	// changed the object, ms, 8 bytes BE (meta.lastModified; the creation
	// time when absent).
	ColScimModified = "sm"
	// ColScimVersion (users, departments and roles, i) is the object's
	// SCIM version, 8 bytes BE: every SCIM change of the row's cells is a
	// CheckAndPut on the version it read and writes the next, so two
	// clients' changes never interleave, and meta.version is W/"<n>".
	// Absent means 0.
	ColScimVersion = "sv"
	// ColClosedAt (users, i) is when a SCIM DELETE closed the account, ms,
	// 8 bytes BE: the user is suspended for good and /scim/v2 answers 404
	// for them from then on.
	ColClosedAt = "cl"
	// ColScimPriority (roles, i, role rows) is the priority a SCIM group
	// of kind role gives its members, EncodePriority (1–1000; absent: 1).
	ColScimPriority = "sp"
)

// ScimAttrs are the SCIM attributes of a user kept as JSON in
// ColScimAttrs: those with no column of their own.
type ScimAttrs struct {
	// Name is the user's name (RFC 7643 §4.1.1 "name").
	Name *ScimName `json:"name,omitempty"`
	// Emails are the user's e-mail addresses.
	Emails []ScimEmail `json:"emails,omitempty"`
	// EmployeeNumber and Manager are the enterprise extension's
	// (urn:ietf:params:scim:schemas:extension:enterprise:2.0:User);
	// Manager is the manager's user id, 0 when none.
	EmployeeNumber string `json:"employeeNumber,omitempty"`
	Manager        uint64 `json:"manager,omitempty"`
	// Title, Department, Organization, CostCenter and Division are the
	// enterprise and core attributes identity providers commonly map.
	Title        string `json:"title,omitempty"`
	Department   string `json:"department,omitempty"`
	Organization string `json:"organization,omitempty"`
	CostCenter   string `json:"costCenter,omitempty"`
	Division     string `json:"division,omitempty"`
	// Locale and PreferredLanguage are the core attributes of those names.
	Locale            string `json:"locale,omitempty"`
	PreferredLanguage string `json:"preferredLanguage,omitempty"`
}

// ScimName is the complex attribute "name".
type ScimName struct {
	Formatted       string `json:"formatted,omitempty"`
	FamilyName      string `json:"familyName,omitempty"`
	GivenName       string `json:"givenName,omitempty"`
	MiddleName      string `json:"middleName,omitempty"`
	HonorificPrefix string `json:"honorificPrefix,omitempty"`
	HonorificSuffix string `json:"honorificSuffix,omitempty"`
}

// ScimEmail is one value of the multi-valued attribute "emails".
type ScimEmail struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"`
	Primary bool   `json:"primary,omitempty"`
	Display string `json:"display,omitempty"`
}

// Family and qualifiers of weibo:scim.
const (
	// FamScim is family s of weibo:scim.
	FamScim = "s"
	// ColScimAt (scim, s) is when the row was written, ms, 8 bytes BE.
	ColScimAt = "t"
	// ColScimClient (scim, s, managed and token rows) is the client's name,
	// UTF-8.
	ColScimClient = "c"
	// ColClientRank (scim, s, client and token rows) is the client's
	// rank, 4 bytes BE (EncodePriority).
	ColClientRank = "r"
	// ColClientToken (scim, s, client rows) is the SHA-256 of the client's
	// token (32 bytes): the key of its token row.
	ColClientToken = "h"
)

// Row kinds of weibo:scim: the first byte of every rowkey.
const (
	// ScimManagedUser: 'u' | uid(8 BE): a user SCIM manages (created, or
	// changed through SCIM). Cells ColScimClient, ColScimAt.
	ScimManagedUser = 'u'
	// ScimExternalID: 'x' | kind(1: 'u' user, 'd' department, 'r' role) |
	// externalId | 0x00 | id(8 BE): the externalId index; externalId
	// holds no 0x00 byte. Cell ColScimAt.
	ScimExternalID = 'x'
	// ScimClient: 'c' | name: a provisioning client. Cells ColClientRank,
	// ColClientToken, ColScimAt.
	ScimClient = 'c'
	// ScimToken: 'k' | SHA-256(token)(32): the token check's row, the
	// authority of a token (revoke deletes it first). Cells ColScimClient,
	// ColClientRank, ColScimAt: the check is one Get.
	ScimToken = 'k'
)

// ScimManagedUserKey is the rowkey of user uid's managed row.
func ScimManagedUserKey(uid UserID) []byte {
	return binary.BigEndian.AppendUint64([]byte{ScimManagedUser}, uint64(uid))
}

// DecodeScimManagedUserKey decodes a managed user's rowkey; ok is false
// for any other row.
func DecodeScimManagedUserKey(k []byte) (uid UserID, ok bool) {
	if len(k) != 9 || k[0] != ScimManagedUser {
		return 0, false
	}
	return UserID(binary.BigEndian.Uint64(k[1:])), true
}

// ScimManagedUsersStart and ScimManagedUsersStop bound the scan of every
// managed user's row, in user-id order.
var (
	ScimManagedUsersStart = []byte{ScimManagedUser}
	ScimManagedUsersStop  = []byte{ScimManagedUser + 1}
)

// ScimExternalIDKey is the rowkey of the externalId index row of object
// id of kind ('u', 'd' or 'r') with externalId ext.
func ScimExternalIDKey(kind byte, ext string, id uint64) []byte {
	k := append(ScimExternalIDPrefix(kind, ext), 0)
	return binary.BigEndian.AppendUint64(k, id)
}

// ScimExternalIDPrefix is the prefix every index row of kind with
// externalId ext starts with, without the 0x00 separator.
func ScimExternalIDPrefix(kind byte, ext string) []byte {
	return append([]byte{ScimExternalID, kind}, ext...)
}

// DecodeScimExternalIDKey decodes an externalId index rowkey.
func DecodeScimExternalIDKey(k []byte) (kind byte, ext string, id uint64, ok bool) {
	if len(k) < 2+1+8 || k[0] != ScimExternalID {
		return 0, "", 0, false
	}
	body := k[2 : len(k)-9]
	if k[len(k)-9] != 0 || bytes.IndexByte(body, 0) >= 0 {
		return 0, "", 0, false
	}
	return k[1], string(body), binary.BigEndian.Uint64(k[len(k)-8:]), true
}

// ScimClientKey is the rowkey of the client named name.
func ScimClientKey(name string) []byte { return append([]byte{ScimClient}, name...) }

// ScimClientsStart and ScimClientsStop bound the scan of every client row.
var (
	ScimClientsStart = []byte{ScimClient}
	ScimClientsStop  = []byte{ScimClient + 1}
)

// ScimTokenKey is the rowkey of the token whose SHA-256 is sum.
func ScimTokenKey(sum [32]byte) []byte { return append([]byte{ScimToken}, sum[:]...) }
