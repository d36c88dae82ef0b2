// User posts: each request, a random reader reads the first page of 50 of a
// random author's posts (the authors with posts, from the users file).
import { closedLoop, gql, pick, users, summary } from './lib.js';

export const options = closedLoop();

const QUERY = `query($id: ID!, $first: Int) { user(id: $id) { id username posts(first: $first) { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } } }`;

export default function () {
  const u = pick(users.readers);
  gql(u.token, QUERY, { id: String(pick(users.authors)), first: 50 }, 'userPosts');
}

export const handleSummary = summary;
