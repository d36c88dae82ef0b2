// Package scim serves SCIM 2.0 (RFC 7643 schema, RFC 7644 protocol) at
// /scim/v2: the company's identity provider (Entra ID, Okta, ...) creates,
// updates, deactivates and deletes users, and pushes departments and roles
// as groups, through weibo/provision.
//
// Routing, discovery, list parameters, filter validation and evaluation,
// PATCH validation and the SCIM error bodies are the library's
// (github.com/elimity-com/scim); this package adds the bearer
// authentication of provisioning clients (weibo/provision/clients), their
// rate limit, the resource handlers mapping SCIM JSON to the domain's
// users and groups, the PATCH engine, If-Match and the error mapping.
//
// Resources:
//   - /Users: a user's id is its decimal user id (GraphQL's User.id);
//     userName is the login name (1–128 printable characters, unique
//     ignoring case); active false is a suspension; DELETE closes the
//     account (404 from then on). Attributes the gateway does not keep
//     (phoneNumbers, addresses, ...) are ignored on create and replace,
//     and PATCH operations on them are dropped.
//   - /Groups: departments and roles, told apart by the gateway extension's
//     kind; a group's id is the GraphQL global id ("department:7",
//     "role:3"). A user is in at most one department: adding them to a
//     department group moves them.
//
// Every request needs Authorization: Bearer <token of a provisioning
// client>; anything else, a GraphQL token included, is 401. Each client
// has a budget of Config.RateLimit units a minute (a request is one, each
// PATCH operation and each member named in a body one more): beyond it,
// 429 with Retry-After. Bodies are application/scim+json.
package scim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/elimity-com/scim"
	scimerr "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"

	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/provision/clients"
)

// Config is what the /scim/v2 handler needs.
type Config struct {
	// Provision is the provisioning domain the resource handlers call.
	Provision *provision.Service
	// Clients authenticates the bearer tokens of provisioning clients.
	Clients *clients.Service
	// Logger receives internal errors (default slog.Default()); tokens
	// and bodies never reach it.
	Logger *slog.Logger
	// RateLimit is each client's budget per minute: a unit per request and
	// per PATCH operation and member named in a body; 0: DefaultRateLimit;
	// negative: no limit.
	RateLimit int64
	// Now replaces time.Now for the rate limit (tests).
	Now func() time.Time
}

// Defaults and bounds of the handler.
const (
	// DefaultRateLimit is a client's budget per minute: 20 single changes
	// a second.
	DefaultRateLimit = 1200
	// MaxBodyBytes bounds a request body (413 beyond): a group of
	// provision.MaxGroupMembers members fits.
	MaxBodyBytes = 4 << 20
	// Prefix is where the handler is mounted.
	Prefix = "/scim/v2"
)

// ctxKey keys the request's provisioning client and response writer.
type ctxKey int

const (
	clientKey ctxKey = iota
	writerKey
)

// clientOf returns the provisioning client of an authenticated request.
func clientOf(ctx context.Context) provision.Client {
	c, _ := ctx.Value(clientKey).(provision.Client)
	return c
}

// setHeader sets a response header from inside a resource handler (the
// library's callbacks see only the request): ETag of a 204.
func setHeader(ctx context.Context, k, v string) {
	if w, ok := ctx.Value(writerKey).(http.ResponseWriter); ok {
		w.Header().Set(k, v)
	}
}

var allowStrings sync.Once

// Handler returns the /scim/v2 handler: it serves requests whose path is
// Prefix + "/..." (or, without the prefix, "/..."), authenticated and rate
// limited per client.
func Handler(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	// Entra ID sends booleans as "True" and "False": accepted for
	// boolean attributes (the library's switch is process-wide; this
	// package is its only user).
	allowStrings.Do(func() { schema.SetAllowStringValues(true) })
	h := &handler{cfg: cfg, prov: cfg.Provision, log: cfg.Logger}
	if cfg.RateLimit > 0 {
		h.limits = newLimiter(cfg.RateLimit)
	}
	h.userType = scim.ResourceType{
		ID: optional.NewString("User"), Name: "User", Endpoint: "/Users",
		Description:      optional.NewString("User Account"),
		Schema:           userSchema(),
		SchemaExtensions: []scim.SchemaExtension{{Schema: enterpriseSchema()}},
		Handler:          &users{h: h},
	}
	h.groupType = scim.ResourceType{
		ID: optional.NewString("Group"), Name: "Group", Endpoint: "/Groups",
		Description:      optional.NewString("A department or a role"),
		Schema:           groupSchema(),
		SchemaExtensions: []scim.SchemaExtension{{Schema: gatewayGroupSchema()}},
		Handler:          &groups{h: h},
	}
	srv, err := scim.NewServer(&scim.ServerArgs{
		ServiceProviderConfig: &scim.ServiceProviderConfig{MaxResults: MaxResults, SupportFiltering: true, SupportPatch: true},
		ResourceTypes:         []scim.ResourceType{h.userType, h.groupType},
	}, scim.WithLogger(libLogger{cfg.Logger}), scim.WithBaseURL(Prefix))
	if err != nil {
		panic(fmt.Sprintf("scim: %v", err)) // only for missing arguments
	}
	h.srv = srv
	return h
}

// handler is the /scim/v2 handler.
type handler struct {
	cfg       Config
	prov      *provision.Service
	log       *slog.Logger
	limits    *limiter
	srv       scim.Server
	userType  scim.ResourceType
	groupType scim.ResourceType
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, Prefix)
	if path == "" {
		path = "/"
	}
	c, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	cost := int64(1)
	if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodDelete {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			writeError(w, scimerr.ScimError{Status: http.StatusRequestEntityTooLarge, Detail: fmt.Sprintf("The body is over %d bytes.", MaxBodyBytes)})
			return
		}
		var n int64
		body, n = h.prepare(r.Method, path, body)
		cost += n
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	if h.limits != nil {
		if wait, ok := h.limits.take(c.Name, cost, h.cfg.Now()); !ok {
			w.Header().Set("Retry-After", fmt.Sprint(int64((wait+time.Second-1)/time.Second)))
			writeError(w, scimerr.ScimError{Status: http.StatusTooManyRequests, Detail: "The client's request budget is spent; retry after the Retry-After seconds."})
			return
		}
	}
	ctx := audit.WithClient(r.Context(), c.Name)
	ctx = context.WithValue(ctx, clientKey, provision.Client{Name: c.Name, Rank: c.Rank})
	ctx = context.WithValue(ctx, writerKey, w)
	r = r.WithContext(ctx)
	u := *r.URL // the caller's URL keeps the prefix (access logs)
	u.Path, u.RawPath = path, ""
	r.URL = &u
	if isServiceProviderConfig(r, path) {
		raw, _ := json.Marshal(serviceProviderConfig())
		w.Header().Set("Content-Type", "application/scim+json")
		_, _ = w.Write(raw)
		return
	}
	h.srv.ServeHTTP(w, r)
}

// authenticate returns the request's provisioning client, or answers 401
// (or 500 when the store fails) and returns false.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request) (*clients.Client, bool) {
	deny := func(detail string) (*clients.Client, bool) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="scim"`)
		writeError(w, scimerr.ScimError{Status: http.StatusUnauthorized, Detail: detail})
		return nil, false
	}
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return deny("Authorization: Bearer <token of a provisioning client> is required.")
	}
	c, err := h.cfg.Clients.Authenticate(r.Context(), strings.TrimSpace(token))
	if err != nil {
		h.log.ErrorContext(r.Context(), "scim: authenticate", "err", err)
		writeError(w, scimerr.ScimErrorInternal)
		return nil, false
	}
	if c == nil {
		return deny("The token is not a provisioning client's, or it was revoked.")
	}
	return c, true
}

// libLogger passes the library's errors to the slog logger.
type libLogger struct{ log *slog.Logger }

func (l libLogger) Error(args ...any) { l.log.Error("scim: " + fmt.Sprint(args...)) }
