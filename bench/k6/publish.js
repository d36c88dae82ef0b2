// Publish: each request, a random reader (a seeded user with fans of its
// own, as the data set has them) publishes a short post. The fan-out into
// the fans' inboxes runs after the answer, on the gateway's worker pool, so
// its CPU shows in the gateway's CPU per request, not in the latency.
// It adds posts to the store: scripts/bench.sh runs it after the reads.
import { closedLoop, gql, pick, users, summary } from './lib.js';

export const options = closedLoop();

const MUTATION = `mutation($c: String!) { publishPost(content: $c) { id createdAt } }`;

export default function () {
  const u = pick(users.readers);
  gql(u.token, MUTATION, { c: `k6 bench post ${__VU}-${__ITER} ${Date.now()}` }, 'publishPost');
}

export const handleSummary = summary;
