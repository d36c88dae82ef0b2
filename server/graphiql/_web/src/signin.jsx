// The sign-in plugin: a sidebar pane with a form that runs the gateway's
// `login` mutation, keeps the token (in localStorage, so that a reload stays
// signed in) and shows who is signed in (`me { username }`); signing out runs
// `logout`, which ends the token on the gateway, and forgets it.
//
// withSignIn wraps GraphiQL's fetcher so that, while signed in, every
// operation carries `Authorization: Bearer <token>`: queries and mutations as
// an HTTP header, subscriptions in the WebSocket's connection_init payload
// (the toolkit's fetcher sends its headers there). The signed-in token
// replaces an Authorization of the Headers tab; signed out, the Headers tab
// is used as it is.
import { useEffect, useState, useSyncExternalStore } from 'react';

const storageKey = 'weibo-gateway.graphiql.token';

// The signed-in token ('' when signed out) and the components watching it.
let token = readToken();
const listeners = new Set();

function readToken() {
  try {
    return globalThis.localStorage?.getItem(storageKey) || '';
  } catch {
    return ''; // storage refused (private mode): signed out
  }
}

function setToken(t) {
  token = t;
  try {
    if (t) localStorage.setItem(storageKey, t);
    else localStorage.removeItem(storageKey);
  } catch {
    // storage refused: the token lives until the page reloads
  }
  for (const l of listeners) l();
}

function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// withSignIn returns fetcher with the signed-in token's Authorization added
// to each operation's headers (any Authorization of the Headers tab, in
// whatever case, is replaced).
export function withSignIn(fetcher) {
  return (params, opts) => {
    if (!token) return fetcher(params, opts);
    const headers = {};
    for (const [k, v] of Object.entries(opts?.headers ?? {})) {
      if (k.toLowerCase() !== 'authorization') headers[k] = v;
    }
    headers.Authorization = `Bearer ${token}`;
    return fetcher(params, { ...opts, headers });
  };
}

// gql posts one operation to endpoint, with tok when not '', and returns its
// data; a GraphQL error becomes an Error whose message ends with the
// error's extensions.code.
async function gql(endpoint, query, variables, tok) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' };
  if (tok) headers.Authorization = `Bearer ${tok}`;
  const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  let body;
  try {
    body = await res.json();
  } catch {
    throw new Error(`HTTP ${res.status}`);
  }
  if (body.errors?.length) {
    const e = body.errors[0];
    throw new Error(e.extensions?.code ? `${e.message} (${e.extensions.code})` : e.message);
  }
  return body.data;
}

const loginMutation = `mutation SignIn($username: String!, $password: String!) {
  login(username: $username, password: $password) { token user { username } }
}`;

const styles = {
  pane: { display: 'flex', flexDirection: 'column', gap: '12px' },
  form: { display: 'flex', flexDirection: 'column', gap: '8px' },
  label: { display: 'flex', flexDirection: 'column', gap: '4px' },
  input: {
    font: 'inherit',
    padding: '6px 8px',
    border: '1px solid hsla(var(--color-neutral), var(--alpha-background-heavy))',
    borderRadius: 'var(--border-radius-4)',
    background: 'hsl(var(--color-base))',
    color: 'hsl(var(--color-neutral))',
  },
  error: { color: 'hsl(var(--color-error))', margin: 0 },
  note: { color: 'hsla(var(--color-neutral), var(--alpha-secondary))', margin: 0 },
};

// SignIn is the plugin's pane.
function SignIn({ endpoint }) {
  const tok = useSyncExternalStore(subscribe, () => token);
  const [me, setMe] = useState(null); // the signed-in username, once known
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  // Who the token is: asked whenever it changes (also for a token kept from
  // an earlier visit, which may have ended since: then it is forgotten).
  useEffect(() => {
    setMe(null);
    if (!tok) return undefined;
    let live = true;
    gql(endpoint, 'query SignedInAs { me { username } }', {}, tok).then(
      d => {
        if (!live) return;
        if (d?.me) setMe(d.me.username);
        else setToken('');
      },
      e => {
        if (!live) return;
        setError(e.message);
        if (e.message.endsWith('(UNAUTHENTICATED)')) setToken('');
      },
    );
    return () => {
      live = false;
    };
  }, [endpoint, tok]);

  async function signIn(ev) {
    ev.preventDefault();
    setBusy(true);
    setError('');
    try {
      const d = await gql(endpoint, loginMutation, { username, password }, '');
      setToken(d.login.token);
    } catch (e) {
      setError(e.message);
    } finally {
      setPassword('');
      setBusy(false);
    }
  }

  async function signOut() {
    setBusy(true);
    setError('');
    try {
      await gql(endpoint, 'mutation SignOut { logout }', {}, tok);
    } catch (e) {
      setError(e.message); // signed out here all the same
    } finally {
      setToken('');
      setBusy(false);
    }
  }

  return (
    <div className="weibo-signin" style={styles.pane}>
      <div className="graphiql-doc-explorer-title">Sign in</div>
      {tok ? (
        <>
          <p className="weibo-signin-status" style={{ margin: 0 }}>
            {me === null ? 'Signing in…' : <>Signed in as <strong>{me}</strong></>}
          </p>
          <p style={styles.note}>
            Queries, mutations and subscriptions run as this user (the token replaces an
            Authorization of the Headers tab).
          </p>
          <button type="button" className="graphiql-button weibo-signout" onClick={signOut} disabled={busy}>
            Sign out
          </button>
        </>
      ) : (
        <form className="weibo-signin-form" style={styles.form} onSubmit={signIn}>
          <label style={styles.label}>
            Username
            <input
              name="username"
              autoComplete="username"
              required
              style={styles.input}
              value={username}
              onChange={e => setUsername(e.target.value)}
            />
          </label>
          <label style={styles.label}>
            Password
            <input
              name="password"
              type="password"
              autoComplete="current-password"
              required
              style={styles.input}
              value={password}
              onChange={e => setPassword(e.target.value)}
            />
          </label>
          <button type="submit" className="graphiql-button" disabled={busy}>
            Sign in
          </button>
          <p style={styles.note}>Demo users: u1, u2, … and admin, password weibo-demo.</p>
        </form>
      )}
      {error && (
        <p role="alert" className="weibo-signin-error" style={styles.error}>
          {error}
        </p>
      )}
    </div>
  );
}

function KeyIcon(props) {
  return (
    <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="1.5" {...props}>
      <circle cx="8" cy="15" r="4" />
      <path d="M11 12l8-8M16 7l3 3M14 9l2 2" strokeLinecap="round" />
    </svg>
  );
}

// signInPlugin returns the GraphiQL plugin signing in against the GraphQL
// endpoint (a URL).
export function signInPlugin(endpoint) {
  return {
    title: 'Sign in',
    icon: KeyIcon,
    content: () => <SignIn endpoint={endpoint} />,
  };
}
