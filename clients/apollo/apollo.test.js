// Runs Apollo Client 3 (@apollo/client, no React) against a running
// gateway: BatchHttpLink batching, validation errors as graphQLErrors, and
// relayStylePagination on the home timeline.
// Started by clients/apollo_test.go (go test ./clients/ -run Apollo), which
// serves the gateway over the demo data and passes, in GATEWAY_APOLLO_TEST,
// its URL, a user's token, and how long that user's home timeline is.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { ApolloClient, HttpLink, InMemoryCache, gql } = require('@apollo/client/core');
const { BatchHttpLink } = require('@apollo/client/link/batch-http');
const { relayStylePagination } = require('@apollo/client/utilities');

const cfg = JSON.parse(process.env.GATEWAY_APOLLO_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_APOLLO_TEST is not set: run go test ./clients/ -run Apollo');
}
const uri = `${cfg.url}/graphql`;
const headers = { Authorization: `Bearer ${cfg.token}` };

// recordingFetch is fetch that keeps every request body it sends.
function recordingFetch() {
  const bodies = [];
  const fn = (input, init) => {
    bodies.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  return { fn, bodies };
}

// client returns an Apollo client with a fresh cache over link.
function client(link, typePolicies) {
  return new ApolloClient({ link, cache: new InMemoryCache({ typePolicies }) });
}

const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    homeTimeline(first: $first, after: $after, last: $last, before: $before) {
      edges {
        cursor
        node {
          id
          content
          author {
            id
            username
          }
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
`;

test('BatchHttpLink sends three queries in one HTTP request and gets every result', async () => {
  const rec = recordingFetch();
  const link = new BatchHttpLink({ uri, headers, fetch: rec.fn, batchMax: 10, batchInterval: 50 });
  const c = client(link);
  const [me, user, timeline] = await Promise.all([
    c.query({ query: gql`query Me { me { id username } }` }),
    c.query({ query: gql`query User($id: ID!) { user(id: $id) { id postCount } }`, variables: { id: cfg.user } }),
    c.query({ query: TIMELINE, variables: { first: 2 } }),
  ]);

  assert.equal(rec.bodies.length, 1, 'one HTTP request');
  assert.ok(Array.isArray(rec.bodies[0]), 'a JSON array body');
  assert.deepEqual(rec.bodies[0].map((op) => op.operationName), ['Me', 'User', 'Timeline']);
  for (const r of [me, user, timeline]) {
    assert.equal(r.errors, undefined);
  }
  assert.equal(me.data.me.id, cfg.user);
  assert.equal(me.data.me.username, cfg.username);
  assert.equal(user.data.user.id, cfg.user);
  assert.equal(user.data.user.postCount, cfg.postCount);
  assert.equal(timeline.data.homeTimeline.edges.length, 2);
});

test('a validation error reaches Apollo as graphQLErrors, not a network error', async () => {
  for (const link of [new HttpLink({ uri, headers }), new BatchHttpLink({ uri, headers })]) {
    const c = client(link);
    await assert.rejects(
      c.query({ query: gql`query Bad { me { id noSuchField } }` }),
      (err) => {
        assert.equal(err.networkError, null, `network error: ${err.networkError}`);
        assert.equal(err.graphQLErrors.length, 1);
        assert.equal(err.graphQLErrors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED');
        assert.match(err.graphQLErrors[0].message, /noSuchField/);
        return true;
      },
    );
    // With errorPolicy all, the errors come back with the result.
    const r = await c.query({ query: gql`query Bad2 { me { id noSuchField } }`, errorPolicy: 'all' });
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED');
  }
});

// ids lists the post ids of a connection's edges.
function ids(conn) {
  return conn.edges.map((e) => e.node.id);
}

test('relayStylePagination merges fetchMore pages of the home timeline without duplicates', async () => {
  const n = cfg.pageSize;
  const c = client(new HttpLink({ uri, headers }), {
    Query: { fields: { homeTimeline: relayStylePagination() } },
  });
  const obs = c.watchQuery({ query: TIMELINE, variables: { first: n } });
  const first = await obs.result();
  assert.equal(first.data.homeTimeline.edges.length, n);
  assert.equal(first.data.homeTimeline.pageInfo.hasNextPage, true);

  for (let page = 2; page <= 3; page++) {
    const { endCursor } = obs.getCurrentResult().data.homeTimeline.pageInfo;
    const more = await obs.fetchMore({ variables: { after: endCursor } });
    assert.equal(more.data.homeTimeline.edges.length, n, `page ${page} as fetched`);
    const merged = obs.getCurrentResult().data.homeTimeline;
    assert.equal(merged.edges.length, page * n, `page ${page} merged`);
  }
  const merged = obs.getCurrentResult().data.homeTimeline;
  const got = ids(merged);
  assert.equal(new Set(got).size, got.length, 'no duplicates');

  // The same list as one direct query of first: 3n, with no cache merging.
  const direct = await client(new HttpLink({ uri, headers })).query({
    query: TIMELINE,
    variables: { first: 3 * n },
    fetchPolicy: 'network-only',
  });
  assert.deepEqual(got, ids(direct.data.homeTimeline));
  assert.deepEqual(merged.edges.map((e) => e.cursor), direct.data.homeTimeline.edges.map((e) => e.cursor));
  assert.equal(merged.pageInfo.endCursor, direct.data.homeTimeline.pageInfo.endCursor);
  assert.equal(merged.pageInfo.hasNextPage, direct.data.homeTimeline.pageInfo.hasNextPage);
  assert.equal(got.length, Math.min(3 * n, cfg.timelineLength));

  // Posts published since: last/before the start cursor, prepended.
  const published = [];
  for (const content of ['apollo newer one', 'apollo newer two']) {
    const r = await c.mutate({
      mutation: gql`mutation Publish($content: String!) { publishPost(content: $content) { id } }`,
      variables: { content },
    });
    published.push(r.data.publishPost.id);
  }
  const { startCursor } = merged.pageInfo;
  const newer = await obs.fetchMore({ variables: { first: null, after: null, last: n, before: startCursor } });
  assert.deepEqual(ids(newer.data.homeTimeline), published.slice().reverse());
  const all = ids(obs.getCurrentResult().data.homeTimeline);
  assert.deepEqual(all, [...published.slice().reverse(), ...got]);
});
