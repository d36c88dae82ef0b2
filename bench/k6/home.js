// Home timeline (issue 11's query): each request, a random user who
// follows someone reads the first page of 50 of their home timeline.
import { closedLoop, gql, pick, users, summary } from './lib.js';

export const options = closedLoop();

export const QUERY = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } }`;

export default function () {
  const u = pick(users.readers);
  gql(u.token, QUERY, { first: 50 }, 'homeTimeline');
}

export const handleSummary = summary;
