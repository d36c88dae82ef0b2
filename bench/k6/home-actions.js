// Home timeline with a client's post actions: home.js's page of 50, each
// post also with its likeCount, commentCount, repostCount, likedByViewer
// and the original of a repost (content and author's username), as a
// Weibo client shows them. Compare its gateway CPU per page with home.js's.
import { closedLoop, gql, pick, users, summary } from './lib.js';

export const options = closedLoop();

export const QUERY = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } likeCount commentCount repostCount likedByViewer repostOf { content author { username } } } } pageInfo { hasNextPage endCursor } } }`;

export default function () {
  const u = pick(users.readers);
  gql(u.token, QUERY, { first: 50 }, 'homeTimeline');
}

export const handleSummary = summary;
