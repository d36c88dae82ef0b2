// GraphiQL for the Weibo gateway: the GraphiQL component with the sign-in
// and explorer plugins, talking to the gateway that serves this page. Queries
// and mutations go over HTTP POST; subscriptions over WebSocket (graphql-ws
// protocol) with the Headers tab's object as the connection_init payload, so
// {"Authorization": "Bearer <token>"} authenticates both; the sign-in plugin
// (src/signin.jsx) sets that Authorization itself while signed in.
//
// Every URL is relative to the page, so the page works behind a path prefix;
// nothing is loaded from another origin.
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import { GraphiQL, HISTORY_PLUGIN } from 'graphiql';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { signInPlugin, withSignIn } from './signin.jsx';

// GraphiQL's own styles; Monaco's come with its modules. Not graphiql/style.css:
// that is the CDN build's, with Monaco's CSS and the Roboto and Fira Code
// fonts inlined (~600 KiB); the page falls back to the system's fonts.
import '@graphiql/react/style.css';
import 'graphiql/graphiql.css';
import '@graphiql/plugin-explorer/style.css';

const here = document.baseURI;
const worker = name => new Worker(new URL(`graphiql/${name}.worker.js`, here));

globalThis.MonacoEnvironment = {
  getWorker(_id, label) {
    switch (label) {
      case 'json':
        return worker('json');
      case 'graphql':
        return worker('graphql');
    }
    return worker('editor');
  },
};

const endpoint = new URL('graphql', here);
const wsEndpoint = new URL(endpoint);
wsEndpoint.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:';

const fetcher = withSignIn(
  createGraphiQLFetcher({
    url: endpoint.href,
    subscriptionUrl: wsEndpoint.href,
  }),
);

const defaultQuery = `# Welcome to the Weibo GraphQL gateway.
#
# Sign in with the key button on the left (every seeded user is u<id> with
# the password weibo-demo), then run the home timeline query: while signed
# in, queries, mutations and subscriptions carry your token. Or log in below
# and put the token into the Headers tab as
#   {"Authorization": "Bearer <token>"}
# (subscriptions run over WebSocket and carry the same headers).

mutation Login {
  login(username: "u1", password: "weibo-demo") {
    token
    user { id username followCount fanCount postCount }
  }
}

query Home {
  me { username followCount fanCount }
  homeTimeline(first: 5) {
    edges { cursor node { id content createdAt author { id username } } }
    pageInfo { hasNextPage endCursor }
  }
}

subscription Live {
  homeTimelineUpdates { id content createdAt author { username } }
}

# Topics (#话题#): what trended on 2020-03-18 (its 24 hours against the 24
# hours before) in the full data set (gateway seed --posts ...). The demo
# subset of make run holds 2020-03-01 and 03-02: TrendingDemo below.
query Trending {
  trendingTopics(at: "2020-03-19T00:00:00+08:00", window: DAY, first: 10) {
    topic { name postCount } count previousCount score
  }
  topTopics(since: "2020-03-18T00:00:00+08:00", until: "2020-03-19T00:00:00+08:00", first: 5) {
    topic { name } count
  }
}

# What trended on 2020-03-02 against 03-01, in make run's demo subset.
query TrendingDemo {
  trendingTopics(at: "2020-03-03T00:00:00+08:00", window: DAY, first: 10) {
    topic { name postCount } count previousCount score
  }
  topTopics(since: "2020-03-02T00:00:00+08:00", until: "2020-03-03T00:00:00+08:00", first: 5) {
    topic { name } count
  }
}

query Topic {
  topic(name: "武汉加油") {
    id name postCount
    posts(first: 5) {
      edges { node { id content createdAt author { username } topics { name } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`;

// The plugins prop replaces GraphiQL's default list, [HISTORY_PLUGIN]; the
// documentation explorer comes regardless.
const plugins = [signInPlugin(endpoint.href), explorerPlugin(), HISTORY_PLUGIN];

createRoot(document.getElementById('graphiql')).render(
  <StrictMode>
    <GraphiQL
      fetcher={fetcher}
      plugins={plugins}
      defaultQuery={defaultQuery}
      shouldPersistHeaders
    />
  </StrictMode>,
);
