// Runs the Relay artifact relay-compiler wrote with persistConfig
// (algorithm SHA256) with relay-runtime against a gateway serving
// --documents=allowlist: its network layer sends {documentId:
// "sha256:<params.id>"}, never text (the artifact holds none).
// Started by clients/relay_persisted_test.go (go test ./clients/ -run
// RelayPersisted), which passes in GATEWAY_RELAY_PERSISTED_TEST the
// gateway's URL, the artifact directory and an ordinary user's token.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Environment, Network, RecordSource, Store, fetchQuery } = require('relay-runtime');

const cfg = JSON.parse(process.env.GATEWAY_RELAY_PERSISTED_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_RELAY_PERSISTED_TEST is not set: run go test ./clients/ -run RelayPersisted');
}

test('a persisted Relay query runs by documentId', async () => {
  const node = require(path.join(cfg.artifacts, 'PersistedMeQuery.graphql.js'));
  assert.equal(node.params.text, null, 'the artifact holds no text');
  const sent = [];
  const env = new Environment({
    network: Network.create(async (params, variables) => {
      const body = { documentId: `sha256:${params.id}`, variables };
      sent.push(body);
      const res = await fetch(`${cfg.url}/graphql`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${cfg.token}` },
        body: JSON.stringify(body),
      });
      const json = await res.json();
      if (json.errors) {
        throw new Error(`${params.name}: HTTP ${res.status} ${JSON.stringify(json.errors)}`);
      }
      return json;
    }),
    store: new Store(new RecordSource()),
  });
  const data = await fetchQuery(env, node, {}).toPromise();
  assert.equal(data.me.username, cfg.username);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].query, undefined);
});
