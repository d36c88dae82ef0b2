// The console's frame: the login form until there is a token, then a bar
// with the viewer and the views they may use, chosen by tabs and kept in
// the URL's fragment (#departments, #users, #roles, #reports, #audit) so a
// reload stays put. A view that needs a permission (Users: MANAGE_USERS,
// Reports: MANAGE_REPORTS, Audit log: VIEW_AUDIT_LOG) is offered only to
// viewers holding it.
import {
  Alert,
  AppBar,
  Box,
  Button,
  Container,
  LinearProgress,
  Paper,
  Stack,
  Tab,
  Tabs,
  TextField,
  Toolbar,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { describe, gql, loggedOutEvent, session } from './api.js';
import { AuditView } from './AuditView.jsx';
import { DepartmentsView } from './DepartmentsView.jsx';
import { ReportsView } from './ReportsView.jsx';
import { RolesView } from './RolesView.jsx';
import { UsersView } from './UsersView.jsx';
import { ViewerProvider, can, loadViewer } from './viewer.jsx';

const views = [
  { key: 'departments', label: 'Departments', View: DepartmentsView },
  { key: 'users', label: 'Users', View: UsersView, permission: 'MANAGE_USERS' },
  { key: 'roles', label: 'Roles', View: RolesView },
  { key: 'reports', label: 'Reports', View: ReportsView, permission: 'MANAGE_REPORTS' },
  { key: 'audit', label: 'Audit log', View: AuditView, permission: 'VIEW_AUDIT_LOG' },
];

const hashKey = () => location.hash.replace(/^#\/?/, '');

export function App() {
  const [token, setToken] = useState(session.token());
  const [viewer, setViewer] = useState(null);
  const [viewerError, setViewerError] = useState(null);
  const [hash, setHash] = useState(hashKey);
  const [notice, setNotice] = useState('');

  useEffect(() => {
    const onHash = () => setHash(hashKey());
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
    setViewer(null);
    setViewerError(null);
    if (!token) return;
    let live = true;
    loadViewer().then(
      v => live && setViewer(v),
      err => live && setViewerError(err),
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
  const offered = views.filter(v => !v.permission || can(viewer, v.permission));
  const { key: view, View } = offered.find(v => v.key === hash) ?? offered[0];
  const held = viewer ? [...viewer.permissions].sort() : [];
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
          {viewer && (
            <Typography variant="body2" data-testid="viewer-permissions" sx={{ mr: 2, opacity: 0.8 }}>
              {held.length ? held.join(' · ') : 'no permissions'}
            </Typography>
          )}
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
          {offered.map(v => (
            <Tab key={v.key} id={`tab-${v.key}`} value={v.key} label={v.label} />
          ))}
        </Tabs>
      </AppBar>
      <Container maxWidth="xl" sx={{ py: 2 }}>
        {viewerError && (
          <Alert severity="error" sx={{ mb: 2 }} data-testid="viewer-error">
            {describe(viewerError)}
          </Alert>
        )}
        {viewer && held.length === 0 && (
          <Alert severity="info" sx={{ mb: 2 }} data-testid="not-admin">
            {viewer.username} holds no permission: the gateway refuses the audit log, the reports and most changes
            (FORBIDDEN); department managers may change their own subtrees.
          </Alert>
        )}
        {viewer ? (
          <ViewerProvider value={viewer}>
            <View />
          </ViewerProvider>
        ) : (
          !viewerError && <LinearProgress data-testid="viewer-loading" />
        )}
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
