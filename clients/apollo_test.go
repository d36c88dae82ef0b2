package clients_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// apolloConfig is what apollo/apollo.test.js reads from GATEWAY_APOLLO_TEST.
type apolloConfig struct {
	URL            string `json:"url"`
	Token          string `json:"token"`
	User           string `json:"user"`
	Username       string `json:"username"`
	PostCount      int    `json:"postCount"`
	TimelineLength int    `json:"timelineLength"`
	PageSize       int    `json:"pageSize"`
}

// apolloPageSize is the page size of the pagination test: three pages
// fetched, so the chosen user's home timeline has more than 3×this posts.
const apolloPageSize = 7

// TestApollo runs Apollo Client 3 (apollo/apollo.test.js, node's test
// runner) against a gateway over the demo data, as the user with the
// longest home timeline: BatchHttpLink sends three queries as one JSON
// array request and gets every result; a validation error reaches Apollo
// as graphQLErrors, not as a network error (HttpLink and BatchHttpLink);
// relayStylePagination on Query.homeTimeline merges two fetchMore pages
// (after: endCursor) with no duplicates into the list one query of
// first: 3 pages gives, then prepends the posts published since
// (last/before: startCursor).
func TestApollo(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	gw := demoGateway(t)

	var uid uint64
	best := 0
	for _, u := range gw.Data.Users {
		if n := len(gw.Data.TimelineIndexes(u.ID)); n > best {
			uid, best = u.ID, n
		}
	}
	if best <= 3*apolloPageSize {
		t.Fatalf("the longest home timeline of the demo data has %d posts, want more than %d", best, 3*apolloPageSize)
	}
	users, err := gw.Svc.Accounts.GetUsers(ctx, []weibo.UserID{weibo.UserID(uid)})
	if err != nil || users[0] == nil {
		t.Fatalf("user %d: %v, %v", uid, users, err)
	}
	token, err := gw.Tokens.Issue(users[0].ID, users[0].CreatedAt, users[0].TokenGeneration)
	if err != nil {
		t.Fatal(err)
	}
	cfg := apolloConfig{
		URL: gw.URL, Token: token, User: users[0].ID.String(), Username: users[0].Username,
		PostCount: gw.Data.PostCount(uid), TimelineLength: best, PageSize: apolloPageSize,
	}
	env, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := command(t, ctx, ".", []string{"GATEWAY_APOLLO_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("apollo", "apollo.test.js"))
	t.Logf("node --test:\n%s", out)
	// node exits non-zero when a test fails; make sure they all ran.
	pass := regexp.MustCompile(`(?m)^. pass (\d+)$`).FindStringSubmatch(out)
	if pass == nil || pass[1] != strconv.Itoa(apolloTests) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
		t.Errorf("want %d passed Apollo tests and none failed", apolloTests)
	}
}

// apolloTests is the number of tests in apollo/apollo.test.js.
const apolloTests = 3

// TestApolloDefer runs apollo/defer.test.js: Apollo Client 3's HttpLink
// asks for multipart/mixed, and a watched query with a @defer'red fragment
// gives the page without the fragment first, then with it (its fields
// checked against the demo data).
func TestApolloDefer(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	gw := demoGateway(t)
	var uid uint64
	for _, u := range gw.Data.Users {
		if gw.Data.PostCount(u.ID) >= 3 {
			uid = u.ID
			break
		}
	}
	users, err := gw.Svc.Accounts.GetUsers(ctx, []weibo.UserID{weibo.UserID(uid)})
	if err != nil || len(users) != 1 || users[0] == nil {
		t.Fatalf("user %d: %v, %v", uid, users, err)
	}
	token, err := gw.Tokens.Issue(users[0].ID, users[0].CreatedAt, users[0].TokenGeneration)
	if err != nil {
		t.Fatal(err)
	}
	env, err := json.Marshal(apolloConfig{URL: gw.URL, Token: token, User: users[0].ID.String(), Username: users[0].Username, PostCount: gw.Data.PostCount(uid)})
	if err != nil {
		t.Fatal(err)
	}
	out := command(t, ctx, ".", []string{"GATEWAY_APOLLO_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("apollo", "defer.test.js"))
	t.Logf("node --test:\n%s", out)
	if !regexp.MustCompile(`(?m)^. pass 1$`).MatchString(out) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
		t.Error("want 1 passed Apollo test and none failed")
	}
}
