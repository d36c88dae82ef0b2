// Roles: every role with its member count and permissions; a selected
// role's permissions (checkboxes of enum Permission, saved with
// setRolePermissions) and, for holders of MANAGE_ROLES, its members with
// their priorities, a form to give the role to a user (assignRole; again
// to change the priority) and a button per member to take it back
// (revokeRole). Creating a role names its permissions too (createRole).
// Changes are offered only where the gateway would make them: to holders
// of MANAGE_ROLES, on roles granting nothing the viewer lacks, and with
// only the permissions the viewer holds to grant.
// A role a provisioning client (SCIM) manages names the client and the
// role's externalId.
import {
  Alert,
  Box,
  Button,
  Checkbox,
  Chip,
  FormControlLabel,
  FormGroup,
  Grid,
  Paper,
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
import { describe, gql, permissions } from './api.js';
import { Provenance, provenanceFields } from './provenance.jsx';
import { Pager, usePaged } from './paging.jsx';
import { useViewer } from './viewer.jsx';

export function RolesView() {
  const { can } = useViewer();
  const manage = can('MANAGE_ROLES');
  const [selected, setSelected] = useState(null); // {id, name}
  const [generation, setGeneration] = useState(0); // reloads the counts after a change
  return (
    <Grid container spacing={2}>
      <Grid size={{ xs: 12, md: 5 }}>
        <Paper sx={{ p: 2 }}>
          <Typography variant="h6" component="h2">
            Roles
          </Typography>
          {manage && <CreateRole onCreated={() => setGeneration(g => g + 1)} />}
          <RoleList key={generation} selectedId={selected?.id} onSelect={setSelected} />
        </Paper>
      </Grid>
      <Grid size={{ xs: 12, md: 7 }}>
        <Paper sx={{ p: 2 }}>
          {selected ? (
            <RoleDetail key={selected.id} role={selected} onChanged={() => setGeneration(g => g + 1)} />
          ) : (
            <Typography color="text.secondary">Select a role to see its permissions and members.</Typography>
          )}
        </Paper>
      </Grid>
    </Grid>
  );
}

// PermissionChecks is a checkbox per permission (ids <id>-<PERMISSION>),
// checked for those in value (a Set); onChange gets the new Set. Only the
// permissions the viewer holds can be ticked or cleared: a role may grant
// only those (ADMINISTRATOR holds them all).
function PermissionChecks({ id, value, onChange, disabled }) {
  const { can } = useViewer();
  return (
    <FormGroup row data-testid={id}>
      {permissions.map(p => (
        <FormControlLabel
          key={p.name}
          title={p.about}
          control={
            <Checkbox
              size="small"
              id={`${id}-${p.name}`}
              checked={value.has(p.name)}
              disabled={disabled || !can(p.name)}
              onChange={e => {
                const next = new Set(value);
                if (e.target.checked) next.add(p.name);
                else next.delete(p.name);
                onChange(next);
              }}
            />
          }
          label={<Typography variant="body2">{p.name}</Typography>}
        />
      ))}
    </FormGroup>
  );
}

// inOrder lists a Set of permissions in the enum's order.
const inOrder = set => permissions.map(p => p.name).filter(n => set.has(n));

function CreateRole({ onCreated }) {
  const [name, setName] = useState('');
  const [granted, setGranted] = useState(() => new Set());
  const [error, setError] = useState(null);
  const submit = async e => {
    e.preventDefault();
    setError(null);
    try {
      await gql(
        'mutation ConsoleCreateRole($name: String!, $permissions: [Permission!]) { createRole(name: $name, permissions: $permissions) { id } }',
        { name: name.trim(), permissions: inOrder(granted) },
      );
      setName('');
      setGranted(new Set());
      onCreated();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Box component="form" onSubmit={submit} sx={{ my: 1 }}>
      <Stack direction="row" spacing={1}>
        <TextField id="new-role-name" size="small" label="New role" value={name} onChange={e => setName(e.target.value)} />
        <Button id="create-role" type="submit" disabled={!name.trim()}>
          Create
        </Button>
      </Stack>
      <PermissionChecks id="new-role-permission" value={granted} onChange={setGranted} />
      {error && (
        <Alert severity="error" sx={{ mt: 1 }} data-testid="create-role-error">
          {describe(error)}
        </Alert>
      )}
    </Box>
  );
}

function RoleList({ selectedId, onSelect }) {
  const paged = usePaged(async (first, after) => {
    const d = await gql(
      `query ConsoleRoles($first: Int, $after: String) {
  roles(first: $first, after: $after) { edges { cursor node { id name memberCount permissions } } pageInfo { hasNextPage endCursor } }
}`,
      { first, after },
    );
    return d.roles;
  });
  return (
    <>
      <Table size="small" data-testid="role-list">
        <TableHead>
          <TableRow>
            <TableCell>Role</TableCell>
            <TableCell>Permissions</TableCell>
            <TableCell align="right">Members</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {paged.edges.map(({ node }) => (
            <TableRow
              key={node.id}
              hover
              selected={node.id === selectedId}
              onClick={() => onSelect({ id: node.id, name: node.name })}
              sx={{ cursor: 'pointer' }}
              data-testid={`role-${node.name}`}
              data-role-id={node.id}
            >
              <TableCell>{node.name}</TableCell>
              <TableCell data-testid="role-permissions" data-permissions={node.permissions.join(' ')}>
                {node.permissions.map(p => (
                  <Chip key={p} size="small" variant="outlined" label={p} sx={{ mr: 0.5, mb: 0.5 }} />
                ))}
              </TableCell>
              <TableCell align="right" data-testid="role-member-count">
                {node.memberCount}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      <Pager paged={paged} id="roles-pager" />
    </>
  );
}

function RoleDetail({ role, onChanged }) {
  const { can } = useViewer();
  const [status, setStatus] = useState(null); // {severity, text}
  const [saved, setSaved] = useState(null); // the role's permissions as the gateway has them
  const [granted, setGranted] = useState(() => new Set()); // as the checkboxes show them
  const [error, setError] = useState(null);
  const [provenance, setProvenance] = useState(null);
  useEffect(() => {
    let live = true;
    gql(`query ConsoleRole($id: ID!) { role(id: $id) { id name permissions ${provenanceFields} } }`, { id: role.id }).then(d => {
      if (!live) return;
      if (!d.role) return setError(new Error('This role no longer exists.'));
      setProvenance(d.role);
      setSaved(d.role.permissions);
      setGranted(new Set(d.role.permissions));
    }, err => live && setError(err));
    return () => {
      live = false;
    };
  }, [role.id]);
  // The viewer changes this role only holding MANAGE_ROLES and every
  // permission it grants.
  const manage = saved !== null && can('MANAGE_ROLES') && saved.every(p => can(p));
  const dirty = saved !== null && inOrder(granted).join() !== inOrder(new Set(saved)).join();
  const savePermissions = async () => {
    setStatus(null);
    try {
      const d = await gql(
        'mutation ConsoleSetRolePermissions($id: ID!, $permissions: [Permission!]!) { setRolePermissions(id: $id, permissions: $permissions) { id permissions } }',
        { id: role.id, permissions: inOrder(granted) },
      );
      const now = d.setRolePermissions.permissions;
      setSaved(now);
      setGranted(new Set(now));
      setStatus({ severity: 'success', text: `${role.name} grants ${now.join(', ') || 'no permission'}.` });
      onChanged();
    } catch (err) {
      setStatus({ severity: 'error', text: describe(err) });
    }
  };
  return (
    <Box data-testid="role-detail">
      <Typography variant="h6" component="h2" data-testid="role-title">
        {role.name}
      </Typography>
      <Provenance object={provenance} testid="role-provisioning" />
      {error && <Alert severity="error">{describe(error)}</Alert>}
      <Typography variant="subtitle2" sx={{ mt: 1 }}>
        Permissions
      </Typography>
      {saved !== null && (
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
          <PermissionChecks id="role-permission" value={granted} onChange={setGranted} disabled={!manage} />
          {manage && (
            <Button id="role-permissions-save" variant="outlined" size="small" disabled={!dirty} onClick={savePermissions}>
              Save permissions
            </Button>
          )}
        </Stack>
      )}
      {status && (
        <Alert severity={status.severity} data-testid="role-status" onClose={() => setStatus(null)} sx={{ mb: 1 }}>
          {status.text}
        </Alert>
      )}
      {can('MANAGE_ROLES') && saved !== null && (
        <RoleMembers role={role} manage={manage} setStatus={setStatus} onChanged={onChanged} />
      )}
    </Box>
  );
}

// RoleMembers lists a role's members (Role.members: MANAGE_ROLES), with
// the assignment form and revoke buttons when manage.
function RoleMembers({ role, manage, setStatus, onChanged }) {
  const [username, setUsername] = useState('');
  const [priority, setPriority] = useState('10');
  const paged = usePaged(async (first, after) => {
    const d = await gql(
      `query ConsoleRoleMembers($id: ID!, $first: Int, $after: String) {
  role(id: $id) {
    id name
    members(first: $first, after: $after) { totalCount edges { cursor priority node { id username } } pageInfo { hasNextPage endCursor } }
  }
}`,
      { id: role.id, first, after },
    );
    if (!d.role) throw new Error('This role no longer exists.');
    return d.role.members;
  });
  const changed = text => {
    setStatus({ severity: 'success', text });
    paged.reload();
    onChanged();
  };
  const assign = async e => {
    e.preventDefault();
    setStatus(null);
    try {
      const d = await gql('query ConsoleUserByName($username: String!) { userByUsername(username: $username) { id username } }', {
        username: username.trim(),
      });
      if (!d.userByUsername) throw new Error(`There is no user ${username.trim()}.`);
      await gql(
        'mutation ConsoleAssignRole($userId: ID!, $roleId: ID!, $priority: Int!) { assignRole(userId: $userId, roleId: $roleId, priority: $priority) { id } }',
        { userId: d.userByUsername.id, roleId: role.id, priority: Number(priority) },
      );
      setUsername('');
      changed(`${d.userByUsername.username} holds ${role.name} with priority ${priority}.`);
    } catch (err) {
      setStatus({ severity: 'error', text: describe(err) });
    }
  };
  const revoke = async user => {
    setStatus(null);
    try {
      await gql('mutation ConsoleRevokeRole($userId: ID!, $roleId: ID!) { revokeRole(userId: $userId, roleId: $roleId) { id } }', {
        userId: user.id,
        roleId: role.id,
      });
      changed(`${user.username} no longer holds ${role.name}.`);
    } catch (err) {
      setStatus({ severity: 'error', text: describe(err) });
    }
  };
  return (
    <Box data-testid="role-members">
      <Typography variant="subtitle2" sx={{ mt: 1 }} data-testid="role-members-title">
        {paged.total != null ? `${paged.total} member${paged.total === 1 ? '' : 's'}` : 'Members'}
      </Typography>
      {manage && (
        <Box component="form" onSubmit={assign} sx={{ my: 1 }}>
          <Stack direction="row" spacing={1}>
            <TextField id="assign-username" size="small" label="Username" value={username} onChange={e => setUsername(e.target.value)} />
            <TextField
              id="assign-priority"
              size="small"
              label="Priority"
              type="number"
              value={priority}
              onChange={e => setPriority(e.target.value)}
              slotProps={{ htmlInput: { min: 1, max: 1000 } }}
              sx={{ width: 110 }}
            />
            <Button id="assign-submit" type="submit" variant="contained" disabled={!username.trim()}>
              Assign
            </Button>
          </Stack>
        </Box>
      )}
      <Table size="small">
        <TableHead>
          <TableRow>
            <TableCell>Username</TableCell>
            <TableCell>User id</TableCell>
            <TableCell align="right">Priority</TableCell>
            <TableCell />
          </TableRow>
        </TableHead>
        <TableBody>
          {paged.edges.map(({ node, priority }) => (
            <TableRow key={node.id} data-testid={`role-member-${node.username}`}>
              <TableCell>{node.username}</TableCell>
              <TableCell>{node.id}</TableCell>
              <TableCell align="right">{priority}</TableCell>
              <TableCell align="right">
                {manage && (
                  <Button size="small" color="error" data-testid={`revoke-${node.username}`} onClick={() => revoke(node)}>
                    Revoke
                  </Button>
                )}
              </TableCell>
            </TableRow>
          ))}
          {!paged.loading && !paged.error && paged.edges.length === 0 && (
            <TableRow>
              <TableCell colSpan={4}>No members.</TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Pager paged={paged} id="role-members-pager" />
    </Box>
  );
}
