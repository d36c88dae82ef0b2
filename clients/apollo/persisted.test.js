// Runs Apollo Client 3 with the persisted-queries link against a gateway
// serving --documents=allowlist: the app's operations go by the ids of a
// manifest that @apollo/generate-persisted-query-manifest built from
// apollo/persisted/*.graphql (and `gateway documents add`
// registered); an operation not in the manifest, as text or as an
// automatic persisted query, is refused for an ordinary token
// (PERSISTED_DOCUMENT_REQUIRED) and runs for an administrator.
// Started by clients/apollo_test.go (go test ./clients/ -run Persisted),
// which passes in GATEWAY_PERSISTED_TEST the gateway's URL, the manifest's
// path, an ordinary user's and an administrator's tokens.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const { ApolloClient, HttpLink, InMemoryCache, gql } = require('@apollo/client/core');
const { createPersistedQueryLink } = require('@apollo/client/link/persisted-queries');
const { generatePersistedQueryIdsFromManifest } = require('@apollo/persisted-query-lists');

const cfg = JSON.parse(process.env.GATEWAY_PERSISTED_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_PERSISTED_TEST is not set: run go test ./clients/ -run Persisted');
}
const uri = `${cfg.url}/graphql`;
const manifest = JSON.parse(fs.readFileSync(cfg.manifest, 'utf8'));

// recordingFetch is fetch that keeps every request body it sends and the
// status of every response.
function recordingFetch() {
  const sent = [];
  const fn = async (input, init) => {
    const resp = await fetch(input, init);
    sent.push({ body: JSON.parse(init.body), status: resp.status });
    return resp;
  };
  return { fn, sent };
}

// client returns an Apollo client sending with token through link.
function client(token, link, rec) {
  const http = new HttpLink({ uri, headers: { Authorization: `Bearer ${token}` }, fetch: rec.fn });
  return new ApolloClient({ link: link ? link.concat(http) : http, cache: new InMemoryCache() });
}

// manifestLink sends the manifest's ids, never the text.
const manifestLink = () => createPersistedQueryLink(generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest }));
// apqLink is the automatic persisted queries: the hash, then on
// PERSISTED_QUERY_NOT_FOUND the text with it (a registration).
const apqLink = () => createPersistedQueryLink({ sha256: (s) => createHash('sha256').update(s).digest('hex') });

const UNLISTED = gql`query Unlisted { me { username } }`;

// codeOf returns the extensions.code of an Apollo error's first GraphQL
// error, whether it came as graphQLErrors or in a non-2xx response.
function codeOf(err) {
  const errors = err.graphQLErrors?.length ? err.graphQLErrors : err.networkError?.result?.errors ?? [];
  return errors[0]?.extensions?.code;
}

test('the manifest operations run by id, text never sent', async () => {
  const rec = recordingFetch();
  const c = client(cfg.token, manifestLink(), rec);
  const me = await c.query({ query: gql`query PersistedMe { me { id username } }` });
  assert.equal(me.data.me.username, cfg.username);
  const user = await c.query({ query: gql`query PersistedUser($id: ID!) { user(id: $id) { id username } }`, variables: { id: me.data.me.id } });
  assert.equal(user.data.user.username, cfg.username);
  assert.equal(rec.sent.length, 2);
  for (const { body, status } of rec.sent) {
    assert.equal(status, 200);
    assert.equal(body.query, undefined, 'no text sent');
    const op = manifest.operations.find((o) => o.name === body.operationName);
    assert.ok(op, `${body.operationName} is in the manifest`);
    assert.equal(body.extensions.persistedQuery.sha256Hash, op.id);
  }
});

test('an unlisted operation is refused for an ordinary token, as text and as APQ', async () => {
  const text = recordingFetch();
  await assert.rejects(client(cfg.token, null, text).query({ query: UNLISTED }), (err) => {
    assert.equal(codeOf(err), 'PERSISTED_DOCUMENT_REQUIRED');
    return true;
  });
  assert.equal(text.sent[0].status, 400);

  const apq = recordingFetch();
  await assert.rejects(client(cfg.token, apqLink(), apq).query({ query: UNLISTED }), (err) => {
    assert.equal(codeOf(err), 'PERSISTED_DOCUMENT_REQUIRED');
    return true;
  });
  // The hash alone (not found), then the registration (refused).
  assert.deepEqual(apq.sent.map((s) => [s.body.query === undefined, s.status]), [[true, 200], [false, 400]]);
});

test('an administrator sends text and registers APQ', async () => {
  const text = recordingFetch();
  const r = await client(cfg.adminToken, null, text).query({ query: UNLISTED });
  assert.equal(r.data.me.username, cfg.adminUsername);

  const apq = recordingFetch();
  const c = client(cfg.adminToken, apqLink(), apq);
  const first = await c.query({ query: gql`query AdminApq { me { id username } }` });
  assert.equal(first.data.me.username, cfg.adminUsername);
  assert.deepEqual(apq.sent.map((s) => s.body.query === undefined), [true, false], 'the hash, then the registration');
  const again = await client(cfg.adminToken, apqLink(), apq).query({ query: gql`query AdminApq { me { id username } }` });
  assert.equal(again.data.me.username, cfg.adminUsername);
  assert.equal(apq.sent.length, 3);
  assert.equal(apq.sent[2].body.query, undefined, 'registered: the hash alone');
});
