// Like: each iteration, a random reader likes a random post (of the 50
// most-followed authors' newest) and unlikes it again, so that the store
// ends as it began; two requests per iteration. The summary line is of
// likePost alone; the CPU per request is of both.
import { gql, measured, pick, users, summary, authorPosts } from './lib.js';

export const options = measured('likePost');

const LIKE = `mutation($id: ID!) { likePost(postId: $id) { id likeCount likedByViewer } }`;
const UNLIKE = `mutation($id: ID!) { unlikePost(postId: $id) { id likeCount likedByViewer } }`;

export function setup() {
  return { posts: authorPosts(50) };
}

export default function (data) {
  const u = pick(users.readers);
  const id = pick(data.posts);
  gql(u.token, LIKE, { id }, 'likePost');
  gql(u.token, UNLIKE, { id }, 'unlikePost');
}

export const handleSummary = summary;
