// The peer's home page (scripts/peer.sh, make bench BENCH=peer): the query
// of home.js, sent to PostGraphile (GATEWAY_URL names it), as a random
// reader of USERS_FILE (bench/peer/load writes it: readers who follow
// someone, each with a JWT of its user_id).
import { closedLoop, gql, pick, users, summary } from './lib.js';
import { QUERY } from './home.js';

export const options = closedLoop();

export default function () {
  const u = pick(users.readers);
  gql(u.token, QUERY, { first: 50 }, 'homeTimeline');
}

export const handleSummary = summary;
