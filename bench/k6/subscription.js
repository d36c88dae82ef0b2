// Subscription fan-out: SUBSCRIBERS (default 32) fans of the most-followed
// author hold a homeTimelineUpdates subscription over WebSocket
// (graphql-transport-ws) while that author publishes PUBLISH_RATE posts a
// second (default 10). Each post carries its publish time; every
// subscriber records publish -> delivery as fanout_latency (ms) and counts
// fanout_deliveries. http_reqs / http_req_duration are the publishes.
import { WebSocket } from 'k6/websockets';
import { Counter, Trend } from 'k6/metrics';
import { check } from 'k6';
import { BASE, gql, users, summary } from './lib.js';

const latency = new Trend('fanout_latency', true);
const deliveries = new Counter('fanout_deliveries');
const duration = __ENV.DURATION || '30s';
const subscribers = Math.min(Number(__ENV.SUBSCRIBERS || 32), users.fans.length);
const PREFIX = 'k6 fanout ';

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'p(95)', 'p(99)', 'max'],
  scenarios: {
    subscribers: {
      executor: 'per-vu-iterations', vus: subscribers, iterations: 1,
      maxDuration: '10m', exec: 'subscribe',
    },
    publisher: {
      executor: 'constant-arrival-rate', rate: Number(__ENV.PUBLISH_RATE || 10), timeUnit: '1s',
      duration, preAllocatedVUs: 4, startTime: '3s', exec: 'publish',
    },
  },
};

const SUBSCRIPTION = `subscription { homeTimelineUpdates { id content } }`;

// subscribe: one fan's subscription, open from the start until the
// publisher has stopped (its 3 s head start + DURATION + 3 s to drain).
export function subscribe() {
  const fan = users.fans[__VU % users.fans.length];
  const url = BASE.replace(/^http/, 'ws') + '/graphql';
  const ws = new WebSocket(url, 'graphql-transport-ws');
  ws.onopen = () => {
    ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${fan.token}` } }));
  };
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type === 'connection_ack') {
      ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION } }));
    } else if (msg.type === 'next') {
      const content = msg.payload.data.homeTimelineUpdates.content;
      if (content.startsWith(PREFIX)) {
        latency.add(Date.now() - Number(content.slice(PREFIX.length).split(' ')[0]));
        deliveries.add(1);
      }
    } else if (msg.type === 'ping') {
      ws.send(JSON.stringify({ type: 'pong' }));
    } else if (msg.type === 'error') {
      check(msg, { 'subscription accepted': () => false });
    }
  };
  ws.onerror = (e) => check(e, { 'websocket ok': () => false });
  const ms = 3000 + parseDuration(duration) + 3000;
  setTimeout(() => ws.close(), ms);
}

// publish: one post by the author, stamped with the time it is sent.
export function publish() {
  gql(users.author.token, `mutation($c: String!) { publishPost(content: $c) { id } }`,
    { c: `${PREFIX}${Date.now()} ${__ITER}` }, 'publishPost');
}

function parseDuration(s) {
  const m = /^(\d+)(ms|s|m)$/.exec(s);
  if (!m) return 30000;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]];
}

export const handleSummary = summary;
