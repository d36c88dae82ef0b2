// Comment: each request, a random reader comments on a random post (of
// the 50 most-followed authors' newest). It adds comments to the store:
// scripts/bench.sh runs it after the reads.
import { gql, measured, pick, users, summary, authorPosts } from './lib.js';

export const options = measured('addComment');

const COMMENT = `mutation($id: ID!, $c: String!) { addComment(postId: $id, content: $c) { id createdAt post { id commentCount } } }`;

export function setup() {
  return { posts: authorPosts(50) };
}

export default function (data) {
  const u = pick(users.readers);
  gql(u.token, COMMENT, { id: pick(data.posts), c: `k6 bench comment ${__VU}-${__ITER}` }, 'addComment');
}

export const handleSummary = summary;
