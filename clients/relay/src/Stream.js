// A Relay connection delivered incrementally: relay-compiler turns
// @stream_connection into `edges @stream(initialCount: 1)` and a
// @defer'red pageInfo; relay/stream.test.js runs it. Only the compiler
// reads this file.
'use strict';

function graphql() {}

graphql`
  query StreamPostsQuery($id: ID!) {
    user(id: $id) {
      id
      ...StreamPosts_user
    }
  }
`;

graphql`
  fragment StreamPosts_user on User {
    posts(first: 10) @stream_connection(key: "StreamPosts_posts", initial_count: 1) {
      edges {
        node {
          id
          content
        }
      }
    }
  }
`;
