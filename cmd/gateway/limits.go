package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/weibohbase/gateway/server"
)

// limitFlags are serve's flags for the limits of README "Limits"; each has
// an environment variable, and a flag given on the command line wins.
type limitFlags struct {
	nodes, fields, aliases, overlap, bodyBytes, uploadBytes, responseBytes, rateLimit int64
	depth, tokens, batch, userFailures, addrFailures, heavy, signupRate               int
	wsOps, wsPerUser, wsPerAddr                                                       int
	introspection                                                                     bool
	requestTimeout, loginMaxDelay, signupWindow                                       time.Duration
	clientIPHeader                                                                    string
	documents                                                                         server.DocumentsMode
	errs                                                                              []error
}

func registerLimitFlags(fs *flag.FlagSet) *limitFlags {
	f := &limitFlags{}
	i64 := func(p *int64, name, key string, def int64, usage string) {
		fs.Int64Var(p, name, envParse(f, key, def, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }), usage+" (env "+key+")")
	}
	i := func(p *int, name, key string, def int, usage string) {
		fs.IntVar(p, name, envParse(f, key, def, strconv.Atoi), usage+" (env "+key+")")
	}
	d := func(p *time.Duration, name, key string, def time.Duration, usage string) {
		fs.DurationVar(p, name, envParse(f, key, def, time.ParseDuration), usage+" (env "+key+")")
	}
	off := "; 0 or negative: no limit"
	i64(&f.nodes, "max-query-nodes", "GATEWAY_MAX_QUERY_NODES", server.DefaultMaxQueryNodes,
		"most objects one operation may return, each connection's first multiplying what is under it (QUERY_TOO_COMPLEX)"+off)
	i(&f.depth, "max-query-depth", "GATEWAY_MAX_QUERY_DEPTH", server.DefaultMaxQueryDepth, "deepest field nesting of an operation (QUERY_TOO_DEEP)"+off)
	i(&f.tokens, "max-query-tokens", "GATEWAY_MAX_QUERY_TOKENS", server.DefaultMaxQueryTokens, "most lexical tokens of a query document (QUERY_TOO_COMPLEX)"+off)
	i64(&f.fields, "max-query-fields", "GATEWAY_MAX_QUERY_FIELDS", server.DefaultMaxQueryFields,
		"most field selections of a document, fragments expanded (QUERY_TOO_COMPLEX)"+off)
	i64(&f.aliases, "max-query-aliases", "GATEWAY_MAX_QUERY_ALIASES", server.DefaultMaxQueryAliases,
		"most aliased field selections of a document, fragments expanded (QUERY_TOO_COMPLEX)"+off)
	i64(&f.overlap, "max-query-overlap", "GATEWAY_MAX_QUERY_OVERLAP", server.DefaultMaxQueryOverlap,
		"most work of validating repeated fields: per selection set and repeated response name, half the square of their expanded size (QUERY_TOO_COMPLEX)"+off)
	fs.BoolVar(&f.introspection, "introspection", envParse(f, "GATEWAY_INTROSPECTION", true, strconv.ParseBool),
		"answer introspection (__schema, __type); false refuses it with GRAPHQL_VALIDATION_FAILED (env GATEWAY_INTROSPECTION)")
	fs.Func("documents", "which operations run: open (any, as text or a registered document's id) or allowlist (registered documents only, added by gateway documents add, "+
		"except for tokens holding RUN_ANY_OPERATION; others get PERSISTED_DOCUMENT_REQUIRED, HTTP 400) (env GATEWAY_DOCUMENTS; default open)", func(s string) error {
		m, err := server.ParseDocumentsMode(s)
		f.documents = m
		return err
	})
	f.documents = envParse(f, "GATEWAY_DOCUMENTS", server.DocumentsOpen, server.ParseDocumentsMode)
	d(&f.requestTimeout, "request-timeout", "GATEWAY_REQUEST_TIMEOUT", server.DefaultRequestTimeout, "time a request may take; then its resolvers stop (TIMEOUT, HTTP 504)"+off)
	i64(&f.bodyBytes, "max-body-bytes", "GATEWAY_MAX_BODY_BYTES", server.DefaultMaxBodyBytes, "largest request body (PAYLOAD_TOO_LARGE, HTTP 413)"+off)
	i64(&f.uploadBytes, "max-upload-bytes", "GATEWAY_MAX_UPLOAD_BYTES", server.DefaultMaxUploadBytes,
		"largest multipart/form-data request body, a file upload with its form (PAYLOAD_TOO_LARGE, HTTP 413)"+off)
	i64(&f.responseBytes, "max-response-bytes", "GATEWAY_MAX_RESPONSE_BYTES", server.DefaultMaxResponseBytes, "largest response data (RESPONSE_TOO_LARGE)"+off)
	i(&f.batch, "max-batch", "GATEWAY_MAX_BATCH", server.DefaultMaxBatch, "most operations in a JSON array batch; 0 or negative: no batches (BAD_REQUEST)")
	i64(&f.rateLimit, "rate-limit", "GATEWAY_RATE_LIMIT", server.DefaultRateLimit,
		"each client's budget of query nodes per minute, a client being its token's user, else its address (RATE_LIMITED, HTTP 429); 0 or negative: off")
	fs.StringVar(&f.clientIPHeader, "client-ip-header", os.Getenv("GATEWAY_CLIENT_IP_HEADER"),
		"header holding the client's address behind a reverse proxy, e.g. X-Forwarded-For (its last entry) or X-Real-IP; default: the connection's address (env GATEWAY_CLIENT_IP_HEADER)")
	i(&f.heavy, "heavy-queries", "GATEWAY_HEAVY_QUERIES", max(1, runtime.GOMAXPROCS(0)/2),
		"how many operations of 1,000 nodes or more execute at once; more wait for a slot within their deadline (default: half the cores)"+off)
	i(&f.userFailures, "login-user-failures", "GATEWAY_LOGIN_USER_FAILURES", server.DefaultLoginUserFailures,
		"failed logins of one username before each attempt must wait, 1 s doubling (RATE_LIMITED); 0 or negative: off")
	i(&f.addrFailures, "login-address-failures", "GATEWAY_LOGIN_ADDRESS_FAILURES", server.DefaultLoginAddressFailures,
		"failed logins and failed registrations of one client address before each attempt must wait, 1 s doubling (RATE_LIMITED); 0 or negative: off")
	d(&f.loginMaxDelay, "login-max-delay", "GATEWAY_LOGIN_MAX_DELAY", server.DefaultLoginMaxDelay, "longest wait the login throttle imposes")
	i(&f.signupRate, "signup-rate", "GATEWAY_SIGNUP_RATE", server.DefaultSignupRate,
		"successful registrations of one client address per --signup-window, as many at once, then refilling evenly (RATE_LIMITED, HTTP 429); 0 or negative: off")
	d(&f.signupWindow, "signup-window", "GATEWAY_SIGNUP_WINDOW", server.DefaultSignupWindow, "the period of --signup-rate; must be positive while it is on")
	i(&f.wsOps, "max-ws-operations", "GATEWAY_MAX_WS_OPERATIONS", server.DefaultMaxWebSocketOperations,
		"most operations (subscriptions) one WebSocket connection runs at once; one more gets an error message for its id (TOO_MANY_OPERATIONS), the connection stays open"+off)
	i(&f.wsPerUser, "max-ws-connections-per-user", "GATEWAY_MAX_WS_CONNECTIONS_PER_USER", server.DefaultMaxWebSocketsPerUser,
		"most WebSocket connections one user holds open, its token in the upgrade's Authorization or the connection_init payload (TOO_MANY_CONNECTIONS, HTTP 429; close code 4429 at connection_init)"+off)
	i(&f.wsPerAddr, "max-ws-connections-per-address", "GATEWAY_MAX_WS_CONNECTIONS_PER_ADDRESS", server.DefaultMaxWebSocketsPerAddress,
		"most WebSocket connections one client address holds open, the address as --client-ip-header makes it (TOO_MANY_CONNECTIONS, HTTP 429)"+off)
	return f
}

// envParse returns the value of environment variable key parsed by parse,
// or def when it is unset; a malformed value is reported by err.
func envParse[T any](f *limitFlags, key string, def T, parse func(string) (T, error)) T {
	s, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	v, err := parse(s)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("environment variable %s=%q: %w", key, s, err))
		return def
	}
	return v
}

// err reports the malformed environment variables, and a flag value out
// of its range.
func (f *limitFlags) err() error {
	errs := append([]error(nil), f.errs...)
	if f.signupRate > 0 && f.signupWindow <= 0 {
		errs = append(errs, fmt.Errorf("--signup-window %v: want a positive duration (or --signup-rate 0: no sign-up limit)", f.signupWindow))
	}
	return errors.Join(errs...)
}

// config returns cfg with the limits set. A flag's 0 means the same as
// omitting it would in server.Config (the default): the flags' defaults
// are those defaults already, so 0 is passed as "off" (negative).
func (f *limitFlags) config(cfg server.Config) server.Config {
	off64 := func(v int64) int64 {
		if v == 0 {
			return -1
		}
		return v
	}
	off := func(v int) int {
		if v == 0 {
			return -1
		}
		return v
	}
	cfg.Limits = server.QueryLimits{MaxNodes: off64(f.nodes), MaxDepth: off(f.depth), MaxTokens: off(f.tokens),
		MaxFields: off64(f.fields), MaxAliases: off64(f.aliases), MaxOverlap: off64(f.overlap)}
	cfg.DisableIntrospection = !f.introspection
	cfg.Documents = f.documents
	cfg.RequestTimeout = f.requestTimeout
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = -1
	}
	cfg.MaxBodyBytes = off64(f.bodyBytes)
	cfg.MaxUploadBytes = off64(f.uploadBytes)
	cfg.MaxResponseBytes = off64(f.responseBytes)
	cfg.MaxBatch = off(f.batch)
	cfg.RateLimit = off64(f.rateLimit)
	cfg.ClientIPHeader = f.clientIPHeader
	cfg.HeavyQueries = off(f.heavy)
	cfg.Logins = server.LoginThrottle{UserFailures: off(f.userFailures), AddressFailures: off(f.addrFailures), MaxDelay: f.loginMaxDelay}
	cfg.Signups = server.SignupLimit{Rate: off(f.signupRate), Window: f.signupWindow}
	cfg.MaxWebSocketOperations = off(f.wsOps)
	cfg.MaxWebSocketsPerUser = off(f.wsPerUser)
	cfg.MaxWebSocketsPerAddress = off(f.wsPerAddr)
	return cfg
}
