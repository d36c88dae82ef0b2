// Delete: each iteration, a random reader publishes a post and deletes
// it again; the delete retracts the post's inbox entries from the fans'
// home timelines after its answer (on the gateway's workers, so that work
// shows in the CPU per request, not in the latency). Two requests per
// iteration; the summary line is of deletePost alone.
import { gql, measured, pick, users, summary } from './lib.js';

export const options = measured('deletePost');

const PUBLISH = `mutation($c: String!) { publishPost(content: $c) { id } }`;
const DELETE = `mutation($id: ID!) { deletePost(id: $id) }`;

export default function () {
  const u = pick(users.readers);
  const body = gql(u.token, PUBLISH, { c: `k6 bench post to delete ${__VU}-${__ITER}` }, 'publishPost');
  if (body && body.data && body.data.publishPost) {
    gql(u.token, DELETE, { id: body.data.publishPost.id }, 'deletePost');
  }
}

export const handleSummary = summary;
