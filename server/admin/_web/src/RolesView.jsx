// Roles: every role with its member count; a selected role's members with
// their priorities, a form to give the role to a user (assignRole; again to
// change the priority) and a button per member to take it back (revokeRole).
import {
  Alert,
  Box,
  Button,
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
import { useState } from 'react';
import { describe, gql } from './api.js';
import { Pager, usePaged } from './paging.jsx';

export function RolesView() {
  const [selected, setSelected] = useState(null); // {id, name}
  const [generation, setGeneration] = useState(0); // reloads the counts after a change
  return (
    <Grid container spacing={2}>
      <Grid size={{ xs: 12, md: 5 }}>
        <Paper sx={{ p: 2 }}>
          <Typography variant="h6" component="h2">
            Roles
          </Typography>
          <CreateRole onCreated={() => setGeneration(g => g + 1)} />
          <RoleList key={generation} selectedId={selected?.id} onSelect={setSelected} />
        </Paper>
      </Grid>
      <Grid size={{ xs: 12, md: 7 }}>
        <Paper sx={{ p: 2 }}>
          {selected ? (
            <RoleMembers key={selected.id} role={selected} onChanged={() => setGeneration(g => g + 1)} />
          ) : (
            <Typography color="text.secondary">Select a role to see its members.</Typography>
          )}
        </Paper>
      </Grid>
    </Grid>
  );
}

function CreateRole({ onCreated }) {
  const [name, setName] = useState('');
  const [error, setError] = useState(null);
  const submit = async e => {
    e.preventDefault();
    setError(null);
    try {
      await gql('mutation ConsoleCreateRole($name: String!) { createRole(name: $name) { id } }', { name: name.trim() });
      setName('');
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
  roles(first: $first, after: $after) { edges { cursor node { id name memberCount } } pageInfo { hasNextPage endCursor } }
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

function RoleMembers({ role, onChanged }) {
  const [status, setStatus] = useState(null); // {severity, text}
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
      <Typography variant="h6" component="h2" data-testid="role-title">
        {role.name}
        {paged.total != null && ` · ${paged.total} member${paged.total === 1 ? '' : 's'}`}
      </Typography>
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
      {status && (
        <Alert severity={status.severity} data-testid="role-status" onClose={() => setStatus(null)} sx={{ mb: 1 }}>
          {status.text}
        </Alert>
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
                <Button size="small" color="error" data-testid={`revoke-${node.username}`} onClick={() => revoke(node)}>
                  Revoke
                </Button>
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
