// Runs Apollo Client 3 (@apollo/client, no React) against a running
// gateway: a query with a @defer'red fragment over HttpLink, which asks for
// multipart/mixed and merges the deferred payload into its cache, so that
// a watching component renders the page first without the deferred
// fragment and then with it.
// Started by clients/apollo_test.go (go test ./clients/ -run ApolloDefer),
// which passes the gateway's URL and a user in GATEWAY_APOLLO_TEST.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { ApolloClient, HttpLink, InMemoryCache, gql } = require('@apollo/client/core');

const cfg = JSON.parse(process.env.GATEWAY_APOLLO_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_APOLLO_TEST is not set: run go test ./clients/ -run ApolloDefer');
}
const uri = `${cfg.url}/graphql`;
const headers = { Authorization: `Bearer ${cfg.token}` };

const USER = gql`
  query DeferredUser($id: ID!) {
    user(id: $id) {
      id
      username
      ...UserCounts @defer(label: "counts")
    }
  }
  fragment UserCounts on User {
    postCount
    posts(first: 3) {
      edges {
        node {
          id
          content
        }
      }
    }
  }
`;

test('a @defer fragment renders after the rest of the query', async () => {
  const exchanges = [];
  const fetchLog = async (input, init) => {
    const res = await fetch(input, init);
    exchanges.push({ accept: init.headers.accept, contentType: res.headers.get('content-type') });
    return res;
  };
  const client = new ApolloClient({ link: new HttpLink({ uri, headers, fetch: fetchLog }), cache: new InMemoryCache() });
  // What a component watching the query renders, in order.
  const renders = [];
  await new Promise((resolve, reject) => {
    const sub = client.watchQuery({ query: USER, variables: { id: cfg.user } }).subscribe({
      next(result) {
        if (result.data) {
          renders.push(structuredClone(result.data.user));
        }
        if (!result.loading && result.data && result.data.user.postCount !== undefined) {
          sub.unsubscribe();
          resolve();
        }
      },
      error: reject,
    });
  });
  assert.equal(exchanges.length, 1);
  assert.match(exchanges[0].accept, /multipart\/mixed/);
  assert.match(exchanges[0].contentType, /^multipart\/mixed;.*deferSpec=20220824/);
  assert.ok(renders.length >= 2, `renders: ${JSON.stringify(renders)}`);
  const first = renders[0];
  assert.equal(first.id, cfg.user);
  assert.equal(first.username, cfg.username);
  assert.equal(first.postCount, undefined, 'the deferred fragment is not in the first render');
  assert.equal(first.posts, undefined);
  const last = renders[renders.length - 1];
  assert.equal(last.username, cfg.username);
  assert.equal(last.postCount, cfg.postCount);
  assert.equal(last.posts.edges.length, Math.min(3, cfg.postCount));
  for (const e of last.posts.edges) {
    assert.match(e.node.id, /^\d+_\d+$/);
  }
});
