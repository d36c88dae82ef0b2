// Sample operations of a Relay app against the gateway. relay-compiler
// compiles them (the `graphql` tags are only read by the compiler; nothing
// runs this file) into relay/.build/__generated__, and relay.test.js runs
// the artifacts with relay-runtime.
'use strict';

function graphql() {}

// A User, a Role and a Department with the same number, in one response:
// their records must stay apart in the store.
graphql`
  query SampleSameNumberQuery($user: ID!, $role: ID!, $department: ID!) {
    user(id: $user) {
      id
      username
      ...Sample_user
    }
    role(id: $role) {
      id
      name
      ...Sample_role
    }
    department(id: $department) {
      id
      name
      ...Sample_department
    }
    roles(first: 100) {
      edges {
        node {
          id
          name
        }
      }
    }
    topDepartments(first: 100) {
      edges {
        node {
          id
          name
        }
      }
    }
    me {
      id
      roles {
        role {
          id
          name
        }
        priority
      }
      department {
        id
        name
      }
    }
  }
`;

// The same objects through node(id:) and nodes(ids:).
graphql`
  query SampleNodesQuery($ids: [ID!]!, $id: ID!) {
    node(id: $id) {
      __typename
      id
    }
    nodes(ids: $ids) {
      __typename
      id
      ... on User {
        username
      }
      ... on Post {
        content
      }
      ... on Role {
        name
      }
      ... on Department {
        name
      }
    }
  }
`;

// Refetchable fragments: relay-compiler generates their refetch queries,
// which go through node(id:).
graphql`
  fragment Sample_user on User @refetchable(queryName: "SampleUserRefetchQuery") {
    id
    username
    postCount
    posts(first: 1) {
      totalCount
    }
  }
`;

graphql`
  fragment Sample_role on Role @refetchable(queryName: "SampleRoleRefetchQuery") {
    id
    name
    memberCount
    members(first: 10) {
      totalCount
      edges {
        priority
        node {
          id
        }
      }
    }
  }
`;

graphql`
  fragment Sample_department on Department @refetchable(queryName: "SampleDepartmentRefetchQuery") {
    id
    name
    children(first: 10) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`;

graphql`
  fragment Sample_post on Post @refetchable(queryName: "SamplePostRefetchQuery") {
    id
    content
    author {
      id
      username
    }
  }
`;

// A home timeline as a Relay connection, paged both ways: the compiler adds
// the pagination query (first/after, last/before) and the page info. `first`
// has no default value: relay-runtime replaces a null variable with its
// default, so loadPrevious would send first and last together, which the
// gateway refuses (BAD_USER_INPUT); the query passes first instead.
graphql`
  fragment Sample_timeline on Query
  @refetchable(queryName: "SampleTimelinePaginationQuery")
  @argumentDefinitions(
    first: {type: "Int"}
    after: {type: "String"}
    last: {type: "Int"}
    before: {type: "String"}
  ) {
    homeTimeline(first: $first, after: $after, last: $last, before: $before)
      @connection(key: "Sample_homeTimeline") {
      edges {
        node {
          id
          content
          ...Sample_post
        }
      }
    }
  }
`;

graphql`
  query SampleTimelineQuery {
    ...Sample_timeline @arguments(first: 2)
  }
`;

module.exports = {};
