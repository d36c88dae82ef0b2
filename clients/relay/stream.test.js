// Runs the @stream_connection of src/Stream.js, as relay-compiler compiled
// it, with relay-runtime against a running gateway: a network layer that
// asks for multipart/mixed, parses the response with meros and hands
// Relay each incremental result, and Relay's connection handler putting
// the streamed edges into the store one by one.
// Started by clients/relay_test.go (go test ./clients/ -run RelayStream),
// which passes the gateway's URL and user 1's token in GATEWAY_RELAY_TEST.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { meros } = require('meros/browser');
const {
  Environment,
  Network,
  Observable,
  RecordSource,
  Store,
  createOperationDescriptor,
  fetchQuery,
  getRequest,
  getSelector,
} = require('relay-runtime');

const cfg = JSON.parse(process.env.GATEWAY_RELAY_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_RELAY_TEST is not set: run go test ./clients/ -run RelayStream');
}

function artifact(name) {
  return require(`./.build/__generated__/${name}.graphql.js`);
}

// relayPayloads turns one payload of incremental delivery into the
// results Relay takes: the initial payload as it is; each deferred
// fragment's data with its path and label; each streamed item as the data
// of its own, its path ending with its index.
function relayPayloads(payload) {
  if (!payload.incremental) {
    return [payload];
  }
  const out = [];
  for (const inc of payload.incremental) {
    if (inc.items) {
      const base = inc.path.slice(0, -1);
      const first = inc.path[inc.path.length - 1];
      inc.items.forEach((item, i) => {
        out.push({ data: item, path: [...base, first + i], label: inc.label, errors: inc.errors });
      });
    } else {
      out.push({ data: inc.data, path: inc.path, label: inc.label, errors: inc.errors });
    }
  }
  return out;
}

// environment is a Relay environment whose network layer posts to the
// gateway with token, accepting multipart/mixed; wire collects every
// payload as received.
function environment(token, wire) {
  const network = Network.create((params, variables) =>
    Observable.create((sink) => {
      (async () => {
        const res = await fetch(`${cfg.url}/graphql`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'multipart/mixed;deferSpec=20220824, application/json',
            Authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({ query: params.text, variables, operationName: params.name }),
        });
        const parts = await meros(res);
        if (!(Symbol.asyncIterator in parts)) {
          const json = await parts.json();
          wire.push(json);
          sink.next(json);
          sink.complete();
          return;
        }
        for await (const part of parts) {
          assert.ok(part.json, 'every part is JSON');
          wire.push(part.body);
          for (const p of relayPayloads(part.body)) {
            sink.next(p);
          }
        }
        sink.complete();
      })().catch((e) => sink.error(e));
    }),
  );
  return new Environment({ network, store: new Store(new RecordSource()) });
}

// edges reads user(id).posts' edges from env's store through the
// fragment: what a component would render.
function edges(env, variables) {
  const op = createOperationDescriptor(getRequest(artifact('StreamPostsQuery')), variables);
  const q = env.lookup(op.fragment).data;
  if (!q || !q.user) {
    return null;
  }
  const f = env.lookup(getSelector(artifact('StreamPosts_user'), q.user)).data;
  return f.posts.edges.map((e) => ({ id: e.node.id, content: e.node.content }));
}

test('a @stream_connection fills the connection edge by edge', async () => {
  const variables = { id: cfg.user };
  const wire = [];
  const env = environment(cfg.userToken, wire);
  const rendered = [];
  await new Promise((resolve, reject) => {
    fetchQuery(env, artifact('StreamPostsQuery'), variables).subscribe({
      next: () => rendered.push(edges(env, variables)),
      complete: resolve,
      error: reject,
    });
  });

  // The gateway's answer: the first edge, then each further one.
  const want = cfg.posts;
  assert.ok(want.length >= 3, `user 1 has ${want.length} posts`);
  assert.equal(wire[0].hasNext, true);
  assert.equal(wire[0].data.user.posts.edges.length, 1);
  const streamed = wire.slice(1).flatMap((p) => p.incremental || []).filter((inc) => inc.items);
  assert.equal(streamed.length, want.length - 1, JSON.stringify(wire));
  streamed.forEach((inc, i) => {
    assert.deepEqual(inc.path, ['user', 'posts', 'edges', i + 1]);
    assert.match(inc.label, /\$stream\$StreamPosts_posts/);
  });
  assert.equal(wire[wire.length - 1].hasNext, false);

  // Relay's store: one edge after the initial payload, all of them, in
  // order, at the end.
  assert.equal(rendered[0].length, 1, JSON.stringify(rendered));
  assert.deepEqual(rendered[rendered.length - 1], want);
  for (let i = 1; i < rendered.length; i++) {
    assert.ok(rendered[i].length >= rendered[i - 1].length, JSON.stringify(rendered));
  }
});
