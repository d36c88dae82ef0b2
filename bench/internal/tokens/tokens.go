// Package tokens mints the gateway's bearer tokens for the load clients of
// `make bench` (bench/live, bench/users): logging thousands of users in
// would cost a bcrypt hash each, while a token signed with the gateway's
// own secret costs a GraphQL read of the user's creation time.
//
// A token carries the user id, the user's creation time (read through the
// gateway: user(id) { createdAt }) and token generation 0, as `gateway
// seed` leaves it; it is signed by auth.NewIssuer with the gateway's secret
// (GATEWAY_JWT_SECRET of `gateway serve`) and lives 24 hours. A user whose
// password has been changed since the import has a later generation: its
// minted token is refused by the gateway.
package tokens

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/bench/internal/gqlpost"
	"github.com/weibohbase/gateway/weibo"
)

// Batch is the number of users one GraphQL request reads.
const Batch = 50

// parallel is the number of GraphQL requests in flight at once.
const parallel = 4

// TTL is how long a minted token is valid.
const TTL = 24 * time.Hour

// Mint returns a bearer token for each user of ids, in the order of ids.
// base is the gateway's base URL (http://host:port, its /graphql serves
// the reads), secret the key the gateway signs its tokens with. The users
// are read Batch to a request, a few requests at a time. The error is the
// first of: an empty secret, a transport or GraphQL error, a user of ids
// the gateway does not know, or ctx's end.
func Mint(ctx context.Context, base string, secret []byte, ids []weibo.UserID) ([]string, error) {
	if len(secret) == 0 {
		return nil, errors.New("tokens: no secret: tokens are signed with the gateway's secret (GATEWAY_JWT_SECRET)")
	}
	iss := auth.NewIssuer(secret, TTL)
	toks := make([]string, len(ids))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() { first = err; cancel() })
	}
	for range min(parallel, (len(ids)+Batch-1)/Batch) {
		wg.Go(func() {
			for lo := range batches {
				if err := mintBatch(ctx, base, iss, ids, toks, lo, min(lo+Batch, len(ids))); err != nil {
					fail(err)
				}
			}
		})
	}
feed:
	for lo := 0; lo < len(ids); lo += Batch {
		select {
		case batches <- lo:
		case <-ctx.Done():
			break feed
		}
	}
	close(batches)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return toks, nil
}

// mintBatch reads the creation times of ids[lo:hi] in one request and
// fills toks[lo:hi].
func mintBatch(ctx context.Context, base string, iss *auth.Issuer, ids []weibo.UserID, toks []string, lo, hi int) error {
	var q strings.Builder
	q.WriteString("query {")
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&q, " u%d: user(id: %q) { createdAt }", i, ids[i].String())
	}
	q.WriteString(" }")
	var data map[string]*struct {
		CreatedAt time.Time `json:"createdAt"`
	}
	if err := post(ctx, base, q.String(), &data); err != nil {
		return fmt.Errorf("tokens: read users: %w", err)
	}
	for i := lo; i < hi; i++ {
		u := data["u"+strconv.Itoa(i)]
		if u == nil {
			return fmt.Errorf("tokens: user %s does not exist", ids[i])
		}
		t, err := iss.Issue(ids[i], u.CreatedAt, 0)
		if err != nil {
			return err
		}
		toks[i] = t
	}
	return nil
}

// post sends query to base's /graphql without a token and decodes its data
// into out; a GraphQL error is an error.
func post(ctx context.Context, base, query string, out any) error {
	return gqlpost.Do(ctx, base, "", query, nil, out)
}
