// One user's view, in a dialog: who they are, their department and roles,
// which provisioning client manages them, under which login name and
// externalId (User.provisioning, for holders of MANAGE_USERS), and their
// suspension (User.suspension), with suspend (for a number of
// days, or until lifted, and a reason: suspendUser) and unsuspend
// (unsuspendUser) for holders of MANAGE_USERS, not offered on a user the
// viewer is known not to outrank. The gateway applies the rank rule all
// the same (FORBIDDEN, shown as the error).
import {
  Alert,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  LinearProgress,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { describe, gql, untilIn, when } from './api.js';
import { useViewer } from './viewer.jsx';

// suspensionFields are a Suspension's fields, for every query of the console.
export const suspensionFields = 'suspension { since until reason }';

// provisioningFields are a Provisioning's fields, for the queries of
// holders of MANAGE_USERS (null for others and for users SCIM never
// touched).
export const provisioningFields = 'provisioning { userName externalId provisionedBy closed }';

// ProvisionedChip marks a user a provisioning client manages, naming the
// client (nothing for the others).
export function ProvisionedChip({ user }) {
  const p = user.provisioning;
  if (!p) return null;
  return (
    <Chip
      size="small"
      variant="outlined"
      label={p.closed ? `closed by ${p.provisionedBy}` : `SCIM: ${p.provisionedBy}`}
      title={`Provisioned by ${p.provisionedBy}; logs in as ${p.userName}`}
      data-testid={`provisioned-${user.username}`}
      data-client={p.provisionedBy}
      sx={{ ml: 0.5 }}
    />
  );
}

// SuspensionChip marks a suspended user in a list (nothing for the others).
export function SuspensionChip({ user }) {
  const s = user.suspension;
  if (!s) return null;
  return (
    <Chip
      size="small"
      color="warning"
      label={s.until ? `suspended until ${when(s.until)}` : 'suspended'}
      data-testid={`suspended-${user.username}`}
    />
  );
}

// UserView shows the user of userId in a dialog; onChanged is called after
// a suspension or its lifting.
export function UserView({ userId, onClose, onChanged = () => {} }) {
  const { viewer, can } = useViewer();
  const manage = can('MANAGE_USERS');
  const [user, setUser] = useState(null);
  const [error, setError] = useState(null);
  const [status, setStatus] = useState(null); // {severity, text}
  const [days, setDays] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const fields = `id username displayName department { id name } rank roles { role { id name } priority } ${manage ? `${suspensionFields} ${provisioningFields}` : ''}`;

  useEffect(() => {
    let live = true;
    gql(`query ConsoleUser($id: ID!) { user(id: $id) { ${fields} } }`, { id: userId }).then(
      d => live && (d.user ? setUser(d.user) : setError(new Error('This user no longer exists.'))),
      err => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [userId]);

  const act = async (mutation, vars, text) => {
    setBusy(true);
    setStatus(null);
    try {
      const d = await gql(mutation, vars);
      setUser(d.u);
      setStatus({ severity: 'success', text: text(d.u) });
      onChanged();
    } catch (err) {
      setStatus({ severity: 'error', text: describe(err) });
    } finally {
      setBusy(false);
    }
  };
  const suspend = e => {
    e.preventDefault();
    let until;
    try {
      until = untilIn(days);
    } catch (err) {
      return setStatus({ severity: 'error', text: err.message });
    }
    act(
      `mutation ConsoleSuspendUser($userId: ID!, $until: Time, $reason: String) { u: suspendUser(userId: $userId, until: $until, reason: $reason) { ${fields} } }`,
      { userId, until, reason: reason.trim() || null },
      u => `${u.username} is suspended ${until ? `until ${when(until)}` : 'until lifted'}.`,
    );
  };
  const unsuspend = () =>
    act(
      `mutation ConsoleUnsuspendUser($userId: ID!) { u: unsuspendUser(userId: $userId) { ${fields} } }`,
      { userId },
      u => `${u.username} is no longer suspended.`,
    );

  const s = user?.suspension;
  const p = user?.provisioning;
  // Why the viewer may not suspend this user, where the console can tell:
  // themselves, or (ranks being shown to holders of MANAGE_ROLES) a user
  // they do not outrank; null otherwise, the gateway deciding.
  let barred = null;
  if (user && user.id === viewer.id) barred = 'You cannot suspend yourself.';
  else if (user && can('MANAGE_ROLES')) {
    const admin = can('ADMINISTRATOR');
    if (viewer.rank < user.rank || (viewer.rank === user.rank && !admin)) {
      barred = `Your rank ${viewer.rank} is not above ${user.username}'s rank ${user.rank}.`;
    }
  }
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" data-testid="user-view">
      <DialogTitle data-testid="user-view-title">
        {user ? user.username : '…'}
        {user?.displayName && (
          <Typography component="span" color="text.secondary" sx={{ ml: 1 }}>
            {user.displayName}
          </Typography>
        )}
      </DialogTitle>
      <DialogContent>
        {!user && !error && <LinearProgress />}
        {error && <Alert severity="error">{describe(error)}</Alert>}
        {user && (
          <Stack spacing={1.5}>
            <Typography variant="body2" data-testid="user-view-facts">
              {[
                user.id,
                // The gateway shows ranks and roles to holders of
                // MANAGE_ROLES, departments to MANAGE_DEPARTMENTS.
                can('MANAGE_ROLES') && `rank ${user.rank}`,
                can('MANAGE_DEPARTMENTS') && (user.department ? user.department.name : 'no department'),
              ]
                .filter(Boolean)
                .join(' · ')}
            </Typography>
            <Box>
              {user.roles.map(r => (
                <Chip key={r.role.id} size="small" label={`${r.role.name} ${r.priority}`} sx={{ mr: 0.5 }} />
              ))}
            </Box>
            {manage && p && (
              <Typography
                variant="body2"
                data-testid="user-provisioning"
                data-client={p.provisionedBy}
                data-external-id={p.externalId ?? ''}
                data-login-name={p.userName}
                data-closed={p.closed ? 'true' : 'false'}
              >
                {`Provisioned by ${p.provisionedBy}${p.externalId ? ` (externalId ${p.externalId})` : ''}`}
                {` · login name ${p.userName}`}
                {p.closed && ' · account closed by the client'}
              </Typography>
            )}
            {manage && (
              <Alert
                severity={s ? 'warning' : 'info'}
                data-testid="user-suspension"
                data-suspended={s ? 'true' : 'false'}
                data-until={s?.until ?? ''}
                data-reason={s?.reason ?? ''}
              >
                {s
                  ? `Suspended since ${when(s.since)}, ${s.until ? `until ${when(s.until)}` : 'until lifted'}${s.reason ? `: ${s.reason}` : ''}.`
                  : 'Not suspended.'}
              </Alert>
            )}
            {manage && barred && (
              <Typography variant="body2" color="text.secondary" data-testid="user-barred">
                {barred}
              </Typography>
            )}
            {manage && !barred && !s && (
              <Box component="form" onSubmit={suspend}>
                <Stack direction="row" spacing={1}>
                  <TextField
                    id="suspend-days"
                    size="small"
                    type="number"
                    label="Days"
                    placeholder="until lifted"
                    value={days}
                    onChange={e => setDays(e.target.value)}
                    slotProps={{ htmlInput: { min: 0, step: 'any' }, inputLabel: { shrink: true } }}
                    sx={{ width: 140 }}
                  />
                  <TextField id="suspend-reason" size="small" label="Reason" value={reason} onChange={e => setReason(e.target.value)} />
                  <Button id="user-suspend" type="submit" color="warning" variant="contained" disabled={busy}>
                    Suspend
                  </Button>
                </Stack>
              </Box>
            )}
            {status && (
              <Alert severity={status.severity} data-testid="user-status" onClose={() => setStatus(null)}>
                {status.text}
              </Alert>
            )}
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        {manage && !barred && s && (
          <Button id="user-unsuspend" color="warning" disabled={busy} onClick={unsuspend}>
            Unsuspend
          </Button>
        )}
        <Button id="user-view-close" onClick={onClose}>
          Close
        </Button>
      </DialogActions>
    </Dialog>
  );
}
