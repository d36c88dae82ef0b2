// Shared helpers of the k6 scripts of `make bench` (scripts/bench.sh):
// the gateway's address, the users file and a GraphQL POST.
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), USERS_FILE
// (the JSON file scripts/bench.sh writes with bin/bench-users:
// {"readers": [{id, username, token, target}], "authors": [ids],
// "author": {...}, "fans": [...]}; by default every user who follows
// someone is a reader), VUS (default 32), DURATION (default 30s).
import http from 'k6/http';
import { check, fail } from 'k6';
import { SharedArray } from 'k6/data';

export const BASE = __ENV.GATEWAY_URL || 'http://127.0.0.1:8080';
export const URL = `${BASE}/graphql`;

const usersFile = __ENV.USERS_FILE || '../../.data/bench-users.json';
// One copy of the users for all VUs (SharedArray), read once at start.
const all = new SharedArray('users', () => {
  const u = JSON.parse(open(usersFile));
  return [u];
});
export const users = all[0];

// options: a closed loop of VUS virtual users for DURATION, as issue 11
// measures (no think time: each VU sends its next request when the last
// one is answered).
export function closedLoop(extra) {
  return Object.assign({
    vus: Number(__ENV.VUS || 32),
    duration: __ENV.DURATION || '30s',
    discardResponseBodies: false,
    summaryTrendStats: ['avg', 'min', 'med', 'p(95)', 'p(99)', 'max'],
    thresholds: { checks: ['rate>0.99'] },
  }, extra || {});
}

// pick returns a random element of arr.
export function pick(arr) {
  return arr[Math.floor(Math.random() * arr.length)];
}

// gql POSTs one GraphQL request as the user with token and returns the
// decoded body; a transport error or a GraphQL error fails the check.
export function gql(token, query, variables, name) {
  const res = http.post(URL, JSON.stringify({ query, variables }), {
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    tags: { name: name || 'graphql' },
  });
  let body = null;
  try {
    body = res.json();
  } catch (e) {
    body = null;
  }
  check(res, {
    'status 200': (r) => r.status === 200,
    'no errors': () => body !== null && !body.errors,
  });
  return body;
}

// measured returns closedLoop options whose summary line (see summary)
// is of the requests tagged name alone: a script sending several kinds
// of request (likePost then unlikePost) reports the one it measures.
// k6 computes a tag's submetrics only for thresholds, hence the
// always-true ones.
export function measured(name, extra) {
  const opts = closedLoop(extra);
  opts.thresholds = Object.assign({}, opts.thresholds, {
    [`http_req_duration{name:${name}}`]: ['max>=0'],
    [`http_reqs{name:${name}}`]: ['count>=0'],
  });
  return opts;
}

// authorPosts reads, as the first reader, the newest posts (up to 20
// each) of the first n authors of the users file and returns their ids:
// the posts the action scripts act on, read once in setup().
export function authorPosts(n) {
  const tok = users.readers[0].token;
  const ids = [];
  for (const a of users.authors.slice(0, n)) {
    const body = gql(tok, `query($id: ID!) { user(id: $id) { posts(first: 20) { edges { node { id } } } } }`, { id: String(a) }, 'setup');
    if (body && body.data && body.data.user) {
      for (const e of body.data.user.posts.edges) ids.push(e.node.id);
    }
  }
  if (ids.length === 0) fail('no posts to act on');
  return ids;
}

// summary prints a short text summary and, when SUMMARY_FILE is set,
// writes k6's JSON summary to SUMMARY_FILE.json and one line to
// SUMMARY_FILE that scripts/bench.sh reads: "count rate p50 p95 p99
// requests" of the requests (http_reqs, http_req_duration in ms; only
// those of the name given to measured, if the script used it), or for
// the subscription of the deliveries (fanout_deliveries, fanout_latency),
// then the number of HTTP requests (all of them: the gateway's CPU per
// request is per any request).
export function summary(data) {
  const out = { stdout: textSummary(data) };
  if (__ENV.SUMMARY_FILE) {
    const m = data.metrics;
    const sub = m.fanout_latency !== undefined;
    const tagged = Object.keys(m).find((k) => k.startsWith('http_req_duration{name:'));
    let n = sub ? m.fanout_deliveries : m.http_reqs;
    let d = sub ? m.fanout_latency : m.http_req_duration;
    if (!sub && tagged) {
      d = m[tagged];
      n = m[tagged.replace('http_req_duration', 'http_reqs')];
    }
    n = n || { values: { count: 0, rate: 0 } };
    d = d || { values: {} };
    const v = d.values;
    const reqs = m.http_reqs ? m.http_reqs.values.count : 0;
    out[__ENV.SUMMARY_FILE] = [n.values.count, n.values.rate, v.med || 0, v['p(95)'] || 0, v['p(99)'] || 0, reqs].join(' ') + '\n';
    out[__ENV.SUMMARY_FILE + '.json'] = JSON.stringify(data);
  }
  return out;
}

function textSummary(data) {
  const m = data.metrics;
  const d = m.http_req_duration ? m.http_req_duration.values : {};
  const reqs = m.http_reqs ? m.http_reqs.values : { count: 0, rate: 0 };
  const checks = m.checks ? m.checks.values : { rate: 0 };
  let s = `requests ${reqs.count} (${reqs.rate.toFixed(1)}/s), checks ${(100 * checks.rate).toFixed(2)} % ok\n`;
  s += `http_req_duration med ${fmt(d.med)} p95 ${fmt(d['p(95)'])} p99 ${fmt(d['p(99)'])} max ${fmt(d.max)}\n`;
  for (const k of Object.keys(m)) {
    if (k.startsWith('http_req_duration{name:')) {
      const v = m[k].values;
      s += `${k} med ${fmt(v.med)} p95 ${fmt(v['p(95)'])} p99 ${fmt(v['p(99)'])} max ${fmt(v.max)}\n`;
    }
  }
  for (const k of Object.keys(m)) {
    if (k.startsWith('fanout_') || k.startsWith('ws_')) {
      s += `${k} ${JSON.stringify(m[k].values)}\n`;
    }
  }
  return s;
}

function fmt(ms) {
  return ms === undefined ? '-' : `${ms.toFixed(2)} ms`;
}

export { fail };
