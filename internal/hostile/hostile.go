// Package hostile holds the requests an attacker sends (no single request
// or client may take the gateway down) as data, for the tests and
// the benchmark that send them to a gateway over HTTP: the in-process
// suite (package server), the binary's resident-memory test (cmd/gateway)
// and the light-query-under-load benchmark. Each case says what the
// gateway must answer: the HTTP status and the first error's
// extensions.code.
package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Env is what the cases need of the gateway's data: a seeded user id with
// follows and fans, a user's name and password, and a token.
type Env struct {
	// UserID is a user with many follows and fans ("4" in the demo data).
	UserID string
	// Username and Password log in (a seeded user of the demo data).
	Username, Password string
	// Token is a bearer token of a user who may publish (another user than
	// Username, whose logins the cases throttle).
	Token string
}

// Case is one hostile request, or the same request sent Repeat times.
type Case struct {
	// Name says what the attack is.
	Name string
	// Method is the HTTP method (default POST).
	Method string
	// ContentType is the request's Content-Type (default application/json).
	ContentType string
	// Body is the request body.
	Body []byte
	// URLQuery is the raw query string of a GET.
	URLQuery string
	// Auth sends Env.Token as the bearer token.
	Auth bool
	// Repeat sends the request this many times in a row (default 1); the
	// wanted status and code are those of the last answer, every answer
	// must come within the time bound.
	Repeat int
	// Status is the wanted HTTP status of the (last) answer.
	Status int
	// Code is the wanted extensions.code of its first error ("": no error).
	Code string
	// Header names a response header the (last) answer must have.
	Header string
}

// Result is what the gateway answered.
type Result struct {
	// Status is the HTTP status.
	Status int
	// Code is the first error's extensions.code, "" when there is none.
	Code string
	// Message is the first error's message.
	Message string
	// Header is the response header.
	Header http.Header
	// Body is the response body.
	Body []byte
	// Took is the time from sending to having read the whole answer.
	Took time.Duration
}

// Send sends c once to base (the gateway's URL, without /graphql).
func (c Case) Send(client *http.Client, base string, env Env) (Result, error) {
	method := c.Method
	if method == "" {
		method = http.MethodPost
	}
	u := base + "/graphql"
	if c.URLQuery != "" {
		u += "?" + c.URLQuery
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(c.Body))
	if err != nil {
		return Result{}, err
	}
	ct := c.ContentType
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	if c.Auth {
		req.Header.Set("Authorization", "Bearer "+env.Token)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Result{}, err
	}
	r := Result{Status: resp.StatusCode, Header: resp.Header, Body: body, Took: time.Since(start)}
	var out struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if len(body) > 0 && body[0] == '{' {
		if err := json.Unmarshal(body, &out); err != nil {
			return r, fmt.Errorf("response is not JSON: %v: %.200s", err, body)
		}
		if len(out.Errors) > 0 {
			r.Code, _ = out.Errors[0].Extensions["code"].(string)
			r.Message = out.Errors[0].Message
		}
	}
	return r, nil
}

// Check tells whether r is what c wants.
func (c Case) Check(r Result) error {
	if r.Status != c.Status || r.Code != c.Code {
		return fmt.Errorf("got HTTP %d code %q (%.200s), want HTTP %d code %q", r.Status, r.Code, r.Message, c.Status, c.Code)
	}
	if c.Header != "" && r.Header.Get(c.Header) == "" {
		return fmt.Errorf("no %s header", c.Header)
	}
	return nil
}

func gql(query string, vars map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return b
}

// Nested returns the query that follows follows and fans of user levels
// deep, first items each: `user(id){ follows(first){ edges{ node{ fans(first){ … username } } } } }`.
func Nested(user string, levels, first int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ user(id: %q) { ", user)
	for i := range levels {
		conn := "follows"
		if i%2 == 1 {
			conn = "fans"
		}
		fmt.Fprintf(&b, "%s(first: %d) { edges { node { ", conn, first)
	}
	b.WriteString("username ")
	b.WriteString(strings.Repeat("} } } ", levels))
	b.WriteString("} }")
	return b.String()
}

// Doubling returns a query of k fragments, each spreading the previous one
// twice: 2^k selections once expanded, in about 50·k bytes.
func Doubling(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query { me { ...F%d } }\nfragment F0 on User { id username }\n", k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "fragment F%d on User { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	return b.String()
}

// Repeated returns `{ me { id id … } }` with n ids.
func Repeated(n int) string { return "{ me { " + strings.Repeat("id ", n) + "} }" }

// SchemaAliases returns n aliases of __schema listing the types' names.
func SchemaAliases(n int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := range n {
		fmt.Fprintf(&b, "s%d: __schema { types { name fields { name } } } ", i)
	}
	b.WriteString("}")
	return b.String()
}

// HeaviestAllowed is the heaviest query this package knows under a node
// limit of maxNodes: user's follows (100), their fans with counters and
// their two newest posts, as many fans as the limit allows (each costs 4
// nodes per followee: 202 + 400·fans in all; 40,202 under the default
// 50,000).
func HeaviestAllowed(user string, maxNodes int64) string {
	fans := min(max((maxNodes-202)/400, 1), 100)
	return fmt.Sprintf(`{ user(id: %q) { follows(first: 100) { edges { node { username fans(first: %d) { edges { node {
  username followCount fanCount postCount followedByViewer posts(first: 2) { edges { node { content createdAt } } } } } } } } } } }`, user, fans)
}

// family is one user-perceived character of 7 code points and 25 bytes.
const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"

// Cases returns every hostile request with what the gateway must
// answer under its default limits.
func Cases(env Env) []Case {
	login := func(user, pw string) []byte {
		return gql(`mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`, map[string]any{"u": user, "p": pw})
	}
	publish := func(content string) []byte {
		return gql(`mutation($c: String!) { publishPost(content: $c) { id } }`, map[string]any{"c": content})
	}
	long72 := strings.Repeat("p", 72)
	hugeCursor := strings.Repeat("A", 1_000_000)
	return []Case{
		{Name: "follows/fans first:100 nested 4 deep", Body: gql(Nested(env.UserID, 4, 100), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "follows/fans first:100 nested 6 deep", Body: gql(Nested(env.UserID, 6, 100), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "follows/fans first:100 nested 10 deep", Body: gql(Nested(env.UserID, 10, 100), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "follows/fans first:1 nested 10 deep", Body: gql(Nested(env.UserID, 10, 1), nil), Status: 200, Code: "QUERY_TOO_DEEP"},
		{Name: "fragments doubling 24 times (2.4 KB)", Body: gql(Doubling(24), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "fragments doubling 60 times", Body: gql(Doubling(60), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "40,000 repeated fields (120 KB)", Body: gql(Repeated(40_000), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "4,000 repeated fields", Body: gql(Repeated(4_000), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "1,500 repeated fields", Body: gql(Repeated(1_500), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "2,000 aliases of __schema", Body: gql(SchemaAliases(2_000), nil), Status: 200, Code: "QUERY_TOO_COMPLEX"},
		{Name: "wrong-password logins for one account", Body: login(env.Username, "wrong horse"), Repeat: 8,
			Status: 429, Code: "RATE_LIMITED", Header: "Retry-After"},
		{Name: "72-byte password plus a suffix", Body: login("nobody_at_all", long72+"suffix"), Status: 200, Code: "BAD_USER_INPUT"},
		{Name: "malformed JSON with a password", Body: []byte(`{"query": "mutation { login(username: \"u1\", password: \"hunter2-secret\") { token } }"`),
			Status: 400, Code: "BAD_REQUEST"},
		{Name: "1 MB malformed body", Body: append([]byte(`{"query": "`), bytes.Repeat([]byte("x"), 1_000_000)...), Status: 400, Code: "BAD_REQUEST"},
		{Name: "body over 1 MiB", Body: gql("{ me { id } }", map[string]any{"pad": strings.Repeat("x", 1<<20)}), Status: 413, Code: "PAYLOAD_TOO_LARGE"},
		{Name: "over-deep JSON", Body: []byte(`{"query": "{ me { id } }", "variables": {"x": ` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}}`),
			Status: 400, Code: "BAD_REQUEST"},
		{Name: "not JSON at all", Body: []byte("query { me { id } }"), Status: 400, Code: "BAD_REQUEST"},
		{Name: "a JSON batch of two", Body: []byte(`[{"query": "{ me { id } }"}, {"query": "{ user(id: \"1\") { id } }"}]`), Status: 200, Code: ""},
		{Name: "a JSON batch over the limit", Body: []byte("[" + strings.Repeat(`{"query": "{ me { id } }"},`, 50) + `{"query": "{ me { id } }"}]`),
			Status: 400, Code: "BAD_REQUEST"},
		{Name: "PUT", Method: http.MethodPut, Body: gql("{ me { id } }", nil), Status: 405, Code: "METHOD_NOT_ALLOWED", Header: "Allow"},
		{Name: "DELETE", Method: http.MethodDelete, Status: 405, Code: "METHOD_NOT_ALLOWED"},
		{Name: "text/plain body", ContentType: "text/plain", Body: gql("{ me { id } }", nil), Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "application/graphql body", ContentType: "application/graphql", Body: []byte("{ me { id } }"), Status: 415, Code: "UNSUPPORTED_MEDIA_TYPE"},
		{Name: "a mutation over GET", Method: http.MethodGet, URLQuery: "query=mutation%7Blogin(username:%22a%22,password:%22b%22)%7Btoken%7D%7D",
			Status: 405, Code: "METHOD_NOT_ALLOWED"},
		{Name: "invalid UTF-8 in post content", Auth: true,
			Body:   []byte(`{"query": "mutation($c: String!) { publishPost(content: $c) { id } }", "variables": {"c": "bad ` + "\xff\xfe" + `"}}`),
			Status: 400, Code: "BAD_USER_INPUT"},
		{Name: "unpaired surrogate in post content", Auth: true,
			Body:   []byte(`{"query": "mutation($c: String!) { publishPost(content: $c) { id } }", "variables": {"c": "bad \ud800"}}`),
			Status: 400, Code: "BAD_USER_INPUT"},
		{Name: "post of NULs", Auth: true, Body: publish("\x00\x00\x00"), Status: 200, Code: "BAD_USER_INPUT"},
		{Name: "post of zero-width spaces", Auth: true, Body: publish("\u200b\u200b\u200b"), Status: 200, Code: "BAD_USER_INPUT"},
		{Name: "post of U+FEFF", Auth: true, Body: publish("\ufeff"), Status: 200, Code: "BAD_USER_INPUT"},
		{Name: "post of 2,500 family emoji", Auth: true, Body: publish(strings.Repeat(family, 2_500)), Status: 200, Code: ""},
		{Name: "post of 10,001 characters", Auth: true, Body: publish(strings.Repeat("微", 10_001)), Status: 200, Code: "BAD_USER_INPUT"},
		{Name: "1 MB malformed cursor", Body: gql(`query($a: String) { user(id: "1") { follows(after: $a) { edges { cursor } } } }`, map[string]any{"a": hugeCursor}),
			Status: 200, Code: "BAD_USER_INPUT"},
	}
}
