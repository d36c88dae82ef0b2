// The operation of the Relay persisted-documents test: relay-compiler,
// run with persistConfig (algorithm SHA256) by clients/relay_persisted_test.go,
// writes its text to the persisted file (which `gateway documents add`
// registers) and only its id to the artifact.
'use strict';

const { graphql } = require('relay-runtime');

graphql`
  query PersistedMeQuery {
    me {
      id
      username
    }
  }
`;
