// Follow/unfollow: each iteration, a random reader follows its target (a
// user it does not follow; the inbox backfill of the target's recent posts
// included) and unfollows it again, so that the store ends as it began;
// two requests per iteration.
import { closedLoop, gql, pick, users, summary } from './lib.js';

export const options = closedLoop();

const FOLLOW = `mutation($id: ID!) { follow(userId: $id) { id fanCount } }`;
const UNFOLLOW = `mutation($id: ID!) { unfollow(userId: $id) { id fanCount } }`;

export default function () {
  const u = pick(users.readers);
  gql(u.token, FOLLOW, { id: u.target }, 'follow');
  gql(u.token, UNFOLLOW, { id: u.target }, 'unfollow');
}

export const handleSummary = summary;
