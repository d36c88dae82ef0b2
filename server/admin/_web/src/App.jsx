// The console's frame: the login form until there is a token, then a bar
// with the viewer and four views, chosen by tabs and kept in the URL's
// fragment (#departments, #users, #roles, #audit) so a reload stays put.
import { Alert, AppBar, Box, Button, Container, Paper, Stack, Tab, Tabs, TextField, Toolbar, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { describe, gql, loggedOutEvent, session } from './api.js';
import { AuditView } from './AuditView.jsx';
import { DepartmentsView } from './DepartmentsView.jsx';
import { RolesView } from './RolesView.jsx';
import { UsersView } from './UsersView.jsx';

const views = [
  { key: 'departments', label: 'Departments', View: DepartmentsView },
  { key: 'users', label: 'Users', View: UsersView },
  { key: 'roles', label: 'Roles', View: RolesView },
  { key: 'audit', label: 'Audit log', View: AuditView },
];

function viewFromHash() {
  const key = location.hash.replace(/^#\/?/, '');
  return views.some(v => v.key === key) ? key : views[0].key;
}

export function App() {
  const [token, setToken] = useState(session.token());
  const [viewer, setViewer] = useState(null);
  const [view, setView] = useState(viewFromHash);
  const [notice, setNotice] = useState('');

  useEffect(() => {
    const onHash = () => setView(viewFromHash());
    const onLoggedOut = () => {
      setToken(null);
      setNotice('Your session has ended: log in again.');
    };
    window.addEventListener('hashchange', onHash);
    window.addEventListener(loggedOutEvent, onLoggedOut);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener(loggedOutEvent, onLoggedOut);
    };
  }, []);

  useEffect(() => {
    if (!token) return setViewer(null);
    let live = true;
    gql('query ConsoleViewer { me { id username roles { role { name } priority } } }').then(
      d => live && setViewer(d.me),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [token]);

  if (!token) {
    return (
      <LoginView
        notice={notice}
        onLogin={t => {
          session.set(t);
          setNotice('');
          setToken(t);
        }}
      />
    );
  }
  const isAdmin = viewer?.roles.some(r => r.role.name === 'admin');
  const { View } = views.find(v => v.key === view);
  return (
    <Box sx={{ minHeight: '100vh', bgcolor: 'grey.50' }}>
      <AppBar position="static" elevation={0}>
        <Toolbar variant="dense">
          <Typography variant="h6" component="h1" sx={{ flexGrow: 1 }}>
            Weibo admin console
          </Typography>
          <Typography data-testid="viewer" sx={{ mr: 2 }}>
            {viewer ? viewer.username : '…'}
          </Typography>
          <Button
            id="logout"
            color="inherit"
            onClick={() => {
              session.clear();
              setToken(null);
            }}
          >
            Log out
          </Button>
        </Toolbar>
        <Tabs
          value={view}
          onChange={(_, key) => {
            location.hash = key;
          }}
          textColor="inherit"
          indicatorColor="secondary"
          sx={{ px: 2 }}
        >
          {views.map(v => (
            <Tab key={v.key} id={`tab-${v.key}`} value={v.key} label={v.label} />
          ))}
        </Tabs>
      </AppBar>
      <Container maxWidth="xl" sx={{ py: 2 }}>
        {viewer && !isAdmin && (
          <Alert severity="info" sx={{ mb: 2 }} data-testid="not-admin">
            {viewer.username} does not hold the admin role: the gateway refuses the audit log and most changes
            (FORBIDDEN); department managers may change their own subtrees.
          </Alert>
        )}
        <View />
      </Container>
    </Box>
  );
}

function LoginView({ onLogin, notice }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async e => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const d = await gql(
        'mutation ConsoleLogin($username: String!, $password: String!) { login(username: $username, password: $password) { token } }',
        { username, password },
      );
      onLogin(d.login.token);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Container maxWidth="xs" sx={{ pt: 10 }}>
      <Paper component="form" onSubmit={submit} sx={{ p: 3 }} data-testid="login-form">
        <Stack spacing={2}>
          <Typography variant="h5" component="h1">
            Weibo admin console
          </Typography>
          {notice && <Alert severity="info">{notice}</Alert>}
          <TextField
            id="login-username"
            label="Username"
            autoComplete="username"
            value={username}
            onChange={e => setUsername(e.target.value)}
            autoFocus
            required
          />
          <TextField
            id="login-password"
            label="Password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={e => setPassword(e.target.value)}
            required
          />
          {error && (
            <Alert severity="error" data-testid="login-error">
              {error}
            </Alert>
          )}
          <Button id="login-submit" type="submit" variant="contained" disabled={busy}>
            Log in
          </Button>
        </Stack>
      </Paper>
    </Container>
  );
}
