// Package clients keeps the provisioning clients of /scim/v2: each is a
// name, a rank and one bearer token, made by `gateway scim token create`
// and good for /scim/v2 only. The store keeps the SHA-256 of a token,
// never the token: the token row 'k' | SHA-256 (the authority: a token is
// good exactly while its row exists) and the client row 'c' | name
// (listing, revoke) of table weibo:scim (weibo/tables/scim.go,
// docs/schema.md).
package clients

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"regexp"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// DefaultRank is the rank of a client created without one: it may act on
// users whose rank is below 500 and grant priorities below it.
const DefaultRank = 500

// MaxRank is the highest rank a client may have (the highest priority).
const MaxRank = 1000

// TokenPrefix starts every client token, so that a token pasted into the
// wrong place is recognisable (and refused) at a glance.
const TokenPrefix = "scim_"

// tokenBytes is the random part of a token: 256 bits.
const tokenBytes = 32

// nameRE is what a client's name may be.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Client is a provisioning client.
type Client struct {
	// Name names the client (1 to 64 of letters, digits, '.', '_', '-',
	// starting with a letter or digit); audit events and provisioned
	// objects carry it.
	Name string
	// Rank is the client's rank under the rank rule, 1 to MaxRank.
	Rank int
	// Created is when the client was created.
	Created time.Time
}

// Service creates, lists, revokes and authenticates the clients of one
// store. It is safe for concurrent use.
type Service struct {
	st  hbase.Store
	now func() time.Time
}

// New returns the clients of st (migrated: weibo:scim exists). now is the
// clock (nil: time.Now).
func New(st hbase.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{st: st, now: now}
}

// Create makes client name with rank and returns its bearer token, which
// is shown this once: the store keeps its SHA-256 only. Errors:
// BAD_USER_INPUT for a bad name, a rank outside 1..MaxRank, or a name
// taken (revoke the client first to issue a new token); the store's.
//
// Writes, in order: the client row with CheckAndPut (absent), which
// decides the name; then the token row, from which the token is good. A
// crash between leaves a client without a good token, which list shows
// and revoke removes.
func (s *Service) Create(ctx context.Context, name string, rank int) (_ string, _ *Client, err error) {
	defer weibo.Wrap(&err, "create scim client")
	if !nameRE.MatchString(name) {
		return "", nil, weibo.BadInput("name", "a client name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if rank < 1 || rank > MaxRank {
		return "", nil, weibo.BadInput("rank", "a client's rank is 1 to %d, got %d", MaxRank, rank)
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, err
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	now := s.now().UnixMilli()
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimClientKey(name), Values: hbase.Values{tables.FamScim: {
		tables.ColClientRank:  tables.EncodePriority(rank),
		tables.ColClientToken: sum[:],
		tables.ColScimAt:      tables.EncodeMillis(now),
	}}}, tables.FamScim, tables.ColClientToken, nil)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", nil, weibo.BadInput("name", "a client named %q exists: revoke it first", name)
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimTokenKey(sum), Values: hbase.Values{tables.FamScim: {
		tables.ColScimClient: []byte(name),
		tables.ColClientRank: tables.EncodePriority(rank),
		tables.ColScimAt:     tables.EncodeMillis(now),
	}}}); err != nil {
		return "", nil, err
	}
	return token, &Client{Name: name, Rank: rank, Created: time.UnixMilli(now)}, nil
}

// List returns every client, by name. Errors are the store's.
func (s *Service) List(ctx context.Context) (_ []*Client, err error) {
	defer weibo.Wrap(&err, "list scim clients")
	var out []*Client
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Scim, Start: tables.ScimClientsStart, Stop: tables.ScimClientsStop}, func(r *hbase.Result) error {
		if c, ok := clientOf(string(r.Row[1:]), r); ok {
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// Revoke removes client name and its token: the token row first (from
// then on the token is refused), then the client row. It reports whether
// the client existed. Errors are the store's.
func (s *Service) Revoke(ctx context.Context, name string) (_ bool, err error) {
	defer weibo.Wrap(&err, "revoke scim client")
	if !nameRE.MatchString(name) {
		return false, nil
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Scim, Row: tables.ScimClientKey(name)})
	if err != nil || !r.Exists() {
		return false, err
	}
	if h := r.Value(tables.FamScim, tables.ColClientToken); len(h) == sha256.Size {
		if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimTokenKey([32]byte(h))}); err != nil {
			return false, err
		}
	}
	return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimClientKey(name)})
}

// Authenticate returns the client whose token this is, or nil when it is
// none (malformed, unknown or revoked): one Get of the token's row, by
// its SHA-256. Errors are the store's.
func (s *Service) Authenticate(ctx context.Context, token string) (_ *Client, err error) {
	defer weibo.Wrap(&err, "authenticate scim client")
	if !strings.HasPrefix(token, TokenPrefix) || len(token) != len(TokenPrefix)+base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return nil, nil
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Scim, Row: tables.ScimTokenKey(sha256.Sum256([]byte(token)))})
	if err != nil || !r.Exists() {
		return nil, err
	}
	name := r.Value(tables.FamScim, tables.ColScimClient)
	if !nameRE.Match(name) || bytes.ContainsAny(name, "\x00") {
		return nil, nil
	}
	c, ok := clientOf(string(name), r)
	if !ok {
		return nil, nil
	}
	return c, nil
}

// clientOf decodes the client named name from its client or token row.
func clientOf(name string, r *hbase.Result) (*Client, bool) {
	rank, ok := tables.DecodePriority(r.Value(tables.FamScim, tables.ColClientRank))
	at := r.Value(tables.FamScim, tables.ColScimAt)
	if !ok || len(at) != 8 {
		return nil, false
	}
	return &Client{Name: name, Rank: rank, Created: time.UnixMilli(int64(binary.BigEndian.Uint64(at)))}, true
}
