// Users: search by username prefix (Query.users), select users (the
// selection is kept across pages and searches), then move them into a
// department (setUsersDepartment) or give them a role with a priority
// (assignRoleToUsers, for holders of MANAGE_ROLES). The answer's failures
// are listed user by user. The view is for holders of MANAGE_USERS (whom
// alone the gateway lets search users): each user's suspension and the
// provisioning client that manages them, if any, are shown,
// the list can be limited to suspended (or not suspended) users, and the
// user's view (UserView), opened by the user's name, suspends and
// unsuspends.
import {
  Alert,
  Box,
  Button,
  Checkbox,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControl,
  FormControlLabel,
  InputLabel,
  MenuItem,
  Paper,
  Select,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { describe, gql } from './api.js';
import { DepartmentTree } from './DepartmentTree.jsx';
import { Pager, usePaged } from './paging.jsx';
import { ProvisionedChip, SuspensionChip, UserView, provisioningFields, suspensionFields } from './UserView.jsx';
import { useViewer } from './viewer.jsx';

// The bulk mutations take up to this many users at once.
const maxBulk = 100;

const bulkFields = 'succeeded { id username } failed { userId code message }';

export function UsersView() {
  const { can } = useViewer();
  const [input, setInput] = useState('');
  const [prefix, setPrefix] = useState('');
  const [suspended, setSuspended] = useState(''); // '' | 'true' | 'false'
  const [open, setOpen] = useState(null); // the id of the user whose view is open
  const [selected, setSelected] = useState(() => new Map()); // id → username
  const [dialog, setDialog] = useState(null); // 'move' | 'role'
  const [result, setResult] = useState(null); // {what, succeeded, failed} | {error}
  const [generation, setGeneration] = useState(0); // reloads the list after a change

  // Search as the prefix is typed, once typing pauses.
  useEffect(() => {
    const t = setTimeout(() => setPrefix(input.trim()), 250);
    return () => clearTimeout(t);
  }, [input]);

  const toggle = (users, on) =>
    setSelected(s => {
      const next = new Map(s);
      for (const u of users) {
        if (on) next.set(u.id, u.username);
        else next.delete(u.id);
      }
      return next;
    });

  const done = (what, r) => {
    setDialog(null);
    setResult({ what, ...r });
    // Keep the users that failed selected, to try again.
    const failed = new Set(r.failed.map(f => f.userId));
    setSelected(s => new Map([...s].filter(([id]) => failed.has(id))));
    setGeneration(g => g + 1);
  };

  const ids = [...selected.keys()];
  return (
    <Paper sx={{ p: 2 }}>
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={2} sx={{ alignItems: { md: 'center' }, mb: 2 }}>
        <TextField
          id="user-search"
          label="Username starts with"
          size="small"
          value={input}
          onChange={e => setInput(e.target.value)}
          onKeyDown={e => e.key === 'Enter' && setPrefix(input.trim())}
          sx={{ minWidth: 260 }}
        />
        <FormControl size="small" sx={{ minWidth: 180 }}>
          <InputLabel id="user-suspended-label">Suspension</InputLabel>
          <Select
            labelId="user-suspended-label"
            id="user-suspended-filter"
            label="Suspension"
            value={suspended}
            onChange={e => setSuspended(e.target.value)}
          >
            <MenuItem value="" data-testid="suspended-option-any">
              Any
            </MenuItem>
            <MenuItem value="true" data-testid="suspended-option-true">
              Suspended
            </MenuItem>
            <MenuItem value="false" data-testid="suspended-option-false">
              Not suspended
            </MenuItem>
          </Select>
        </FormControl>
        <Box sx={{ flexGrow: 1 }} />
        <Typography data-testid="selected-count">{selected.size} selected</Typography>
        <Button id="users-clear" onClick={() => setSelected(new Map())} disabled={selected.size === 0}>
          Clear
        </Button>
        <Button
          id="users-move"
          variant="outlined"
          disabled={selected.size === 0 || selected.size > maxBulk}
          onClick={() => setDialog('move')}
        >
          Move to department…
        </Button>
        {can('MANAGE_ROLES') && (
          <Button
            id="users-assign-role"
            variant="contained"
            disabled={selected.size === 0 || selected.size > maxBulk}
            onClick={() => setDialog('role')}
          >
            Give role…
          </Button>
        )}
      </Stack>
      {selected.size > maxBulk && (
        <Alert severity="warning" sx={{ mb: 2 }}>
          At most {maxBulk} users at once.
        </Alert>
      )}
      {selected.size > 0 && (
        <Box sx={{ mb: 2, display: 'flex', flexWrap: 'wrap', gap: 0.5 }} data-testid="selected-users">
          {[...selected].map(([id, username]) => (
            <Chip key={id} size="small" label={username} onDelete={() => toggle([{ id }], false)} />
          ))}
        </Box>
      )}
      {result && <BulkResultView result={result} names={result.names} onClose={() => setResult(null)} />}
      <UserResults
        key={`${prefix}/${suspended}/${generation}`}
        prefix={prefix}
        suspended={suspended}
        selected={selected}
        toggle={toggle}
        onOpen={setOpen}
      />
      {open && <UserView userId={open} onClose={() => setOpen(null)} onChanged={() => setGeneration(g => g + 1)} />}
      {dialog === 'move' && (
        <MoveDialog
          onClose={() => setDialog(null)}
          onConfirm={async (departmentId, name) => {
            const names = new Map(selected);
            try {
              const d = await gql(
                `mutation ConsoleSetUsersDepartment($userIds: [ID!]!, $departmentId: ID) { r: setUsersDepartment(userIds: $userIds, departmentId: $departmentId) { ${bulkFields} } }`,
                { userIds: ids, departmentId },
              );
              done(name ? `moved to ${name}` : 'taken out of their department', { ...d.r, names });
            } catch (error) {
              setDialog(null);
              setResult({ error });
            }
          }}
        />
      )}
      {dialog === 'role' && (
        <RoleDialog
          count={selected.size}
          onClose={() => setDialog(null)}
          onConfirm={async (role, priority) => {
            const names = new Map(selected);
            try {
              const d = await gql(
                `mutation ConsoleAssignRoleToUsers($userIds: [ID!]!, $roleId: ID!, $priority: Int!) { r: assignRoleToUsers(userIds: $userIds, roleId: $roleId, priority: $priority) { ${bulkFields} } }`,
                { userIds: ids, roleId: role.id, priority },
              );
              done(`given ${role.name} (priority ${priority})`, { ...d.r, names });
            } catch (error) {
              setDialog(null);
              setResult({ error });
            }
          }}
        />
      )}
    </Paper>
  );
}

function UserResults({ prefix, suspended, selected, toggle, onOpen }) {
  const paged = usePaged(async (first, after) => {
    const filter = {};
    if (prefix) filter.usernamePrefix = prefix;
    if (suspended) filter.suspended = suspended === 'true';
    const d = await gql(
      `query ConsoleUsers($first: Int, $after: String, $filter: UserFilter) {
  users(first: $first, after: $after, filter: $filter) {
    totalCount
    edges { cursor node { id username department { id name } roles { role { id name } priority } ${suspensionFields} ${provisioningFields} } }
    pageInfo { hasNextPage endCursor }
  }
}`,
      { first, after, filter },
    );
    return d.users;
  });
  const users = paged.edges.map(e => e.node);
  const onPage = users.filter(u => selected.has(u.id)).length;
  return (
    <>
      <Table size="small" data-testid="user-results">
        <TableHead>
          <TableRow>
            <TableCell padding="checkbox">
              <Checkbox
                id="users-select-page"
                checked={users.length > 0 && onPage === users.length}
                indeterminate={onPage > 0 && onPage < users.length}
                onChange={e => toggle(users, e.target.checked)}
                slotProps={{ input: { 'aria-label': 'Select every user on this page' } }}
              />
            </TableCell>
            <TableCell>Username</TableCell>
            <TableCell>User id</TableCell>
            <TableCell>Department</TableCell>
            <TableCell>Roles</TableCell>
            <TableCell>Suspension</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {users.map(u => (
            <TableRow
              key={u.id}
              hover
              selected={selected.has(u.id)}
              data-testid={`user-row-${u.username}`}
              onClick={() => toggle([u], !selected.has(u.id))}
              sx={{ cursor: 'pointer' }}
            >
              <TableCell padding="checkbox">
                <Checkbox
                  checked={selected.has(u.id)}
                  slotProps={{ input: { 'aria-label': `Select ${u.username}`, 'data-testid': `user-check-${u.username}` } }}
                  onClick={e => e.stopPropagation()}
                  onChange={e => toggle([u], e.target.checked)}
                />
              </TableCell>
              <TableCell>
                <Button
                  size="small"
                  sx={{ textTransform: 'none', minWidth: 0, p: 0 }}
                  data-testid={`user-open-${u.username}`}
                  title={`Open ${u.username}'s view`}
                  onClick={e => {
                    e.stopPropagation();
                    onOpen(u.id);
                  }}
                >
                  {u.username}
                </Button>
                <ProvisionedChip user={u} />
              </TableCell>
              <TableCell>{u.id}</TableCell>
              <TableCell>{u.department?.name ?? '—'}</TableCell>
              <TableCell>
                {u.roles.map(r => (
                  <Chip key={r.role.id} size="small" label={`${r.role.name} ${r.priority}`} sx={{ mr: 0.5 }} />
                ))}
              </TableCell>
              <TableCell>
                <SuspensionChip user={u} />
              </TableCell>
            </TableRow>
          ))}
          {!paged.loading && !paged.error && users.length === 0 && (
            <TableRow>
              <TableCell colSpan={6}>No users {prefix ? `whose username starts with “${prefix}”` : ''}.</TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Pager paged={paged} id="users-pager" />
    </>
  );
}

// BulkResultView reports a bulk mutation: how many users it changed, and
// each failure with the user, the code and the gateway's message.
function BulkResultView({ result, names, onClose }) {
  if (result.error) {
    return (
      <Alert severity="error" data-testid="bulk-error" onClose={onClose} sx={{ mb: 2 }}>
        {describe(result.error)}
      </Alert>
    );
  }
  const { what, succeeded, failed } = result;
  return (
    <Box sx={{ mb: 2 }} data-testid="bulk-result">
      <Alert severity={failed.length ? 'warning' : 'success'} onClose={onClose} data-testid="bulk-summary">
        {succeeded.length} user{succeeded.length === 1 ? '' : 's'} {what}
        {succeeded.length > 0 && `: ${succeeded.map(u => u.username).join(', ')}`}
        {failed.length > 0 && `; ${failed.length} failed (still selected)`}.
      </Alert>
      {failed.length > 0 && (
        <Table size="small" data-testid="bulk-failures">
          <TableHead>
            <TableRow>
              <TableCell>User</TableCell>
              <TableCell>Code</TableCell>
              <TableCell>Message</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {failed.map(f => (
              <TableRow key={f.userId} data-testid={`bulk-failure-${f.userId}`}>
                <TableCell>{names?.get(f.userId) ?? f.userId}</TableCell>
                <TableCell>{f.code}</TableCell>
                <TableCell>{f.message}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}

function MoveDialog({ onClose, onConfirm }) {
  const [target, setTarget] = useState(null); // {id, name}
  const [none, setNone] = useState(false);
  const [busy, setBusy] = useState(false);
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" data-testid="move-dialog">
      <DialogTitle>Move the selected users</DialogTitle>
      <DialogContent>
        <Typography variant="body2" sx={{ mb: 1 }}>
          {none ? 'The users will belong to no department.' : target ? `Into ${target.name}.` : 'Pick a department.'}
        </Typography>
        {!none && (
          <DepartmentTree testid="pick" height={320} selectedId={target?.id} onSelect={(id, name) => setTarget({ id, name })} />
        )}
        <FormControlLabel
          control={<Checkbox id="move-none" checked={none} onChange={e => setNone(e.target.checked)} />}
          label="No department"
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Cancel</Button>
        <Button
          id="move-confirm"
          variant="contained"
          disabled={busy || (!none && !target)}
          onClick={async () => {
            setBusy(true);
            await onConfirm(none ? null : target.id, none ? null : target.name);
          }}
        >
          Move
        </Button>
      </DialogActions>
    </Dialog>
  );
}

// loadRoles returns every role ({id, name, memberCount}), by name.
export async function loadRoles() {
  const roles = [];
  let after = null;
  for (;;) {
    const d = await gql(
      'query ConsoleAllRoles($after: String) { roles(first: 100, after: $after) { edges { node { id name memberCount } } pageInfo { hasNextPage endCursor } } }',
      { after },
    );
    roles.push(...d.roles.edges.map(e => e.node));
    if (!d.roles.pageInfo.hasNextPage) return roles;
    after = d.roles.pageInfo.endCursor;
  }
}

function RoleDialog({ count, onClose, onConfirm }) {
  const [roles, setRoles] = useState(null);
  const [error, setError] = useState(null);
  const [roleId, setRoleId] = useState('');
  const [priority, setPriority] = useState('10');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    loadRoles().then(setRoles, setError);
  }, []);
  const p = Number(priority);
  const valid = roleId && Number.isInteger(p) && p >= 1 && p <= 1000;
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="xs" data-testid="role-dialog">
      <DialogTitle>
        Give {count} user{count === 1 ? '' : 's'} a role
      </DialogTitle>
      <DialogContent>
        {error && <Alert severity="error">{describe(error)}</Alert>}
        <Stack spacing={2} sx={{ mt: 1 }}>
          <FormControl fullWidth>
            <InputLabel id="assign-role-label">Role</InputLabel>
            <Select
              labelId="assign-role-label"
              id="assign-role-select"
              label="Role"
              value={roleId}
              onChange={e => setRoleId(e.target.value)}
            >
              {(roles ?? []).map(r => (
                <MenuItem key={r.id} value={r.id} data-testid={`role-option-${r.name}`}>
                  {r.name}
                </MenuItem>
              ))}
            </Select>
          </FormControl>
          <TextField
            id="assign-role-priority"
            label="Priority (1–1000, higher first)"
            type="number"
            value={priority}
            onChange={e => setPriority(e.target.value)}
            slotProps={{ htmlInput: { min: 1, max: 1000 } }}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Cancel</Button>
        <Button
          id="assign-role-confirm"
          variant="contained"
          disabled={busy || !valid}
          onClick={async () => {
            setBusy(true);
            await onConfirm(
              roles.find(r => r.id === roleId),
              p,
            );
          }}
        >
          Give role
        </Button>
      </DialogActions>
    </Dialog>
  );
}
