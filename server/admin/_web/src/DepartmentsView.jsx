// Departments: the tree on the left (drag a department onto another to move
// it there), the selected department's members on the right, with the
// provisioning client that manages the department, if any.
import {
  Alert,
  Box,
  Button,
  Chip,
  Grid,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { useRef, useState } from 'react';
import { describe, gql } from './api.js';
import { DepartmentTree } from './DepartmentTree.jsx';
import { Pager, usePaged } from './paging.jsx';
import { Provenance, provenanceFields } from './provenance.jsx';

const moveDepartment = (id, parentId) =>
  gql(
    'mutation ConsoleMoveDepartment($id: ID!, $parentId: ID) { moveDepartment(id: $id, parentId: $parentId) { id parent { id } } }',
    { id, parentId },
  );

// moveMessage is what the console says about a move that the gateway refused.
function moveMessage(err, { name, to }) {
  if (err.reason === 'DEPARTMENT_CYCLE') {
    return `${name} cannot move under ${to ?? 'the top level'}: that department is now inside ${name}'s own subtree (the tree shown may be out of date: Reload shows the current one). ${describe(err)}`;
  }
  return `Moving ${name} failed: ${describe(err)}`;
}

export function DepartmentsView() {
  const [selected, setSelected] = useState(null);
  const [status, setStatus] = useState(null); // {severity, text}
  const tree = useRef(null);
  return (
    <Grid container spacing={2}>
      <Grid size={{ xs: 12, md: 5 }}>
        <Paper sx={{ p: 2 }}>
          <Stack direction="row" sx={{ alignItems: 'center', mb: 1 }}>
            <Typography variant="h6" component="h2" sx={{ flexGrow: 1 }}>
              Department tree
            </Typography>
            <Button id="tree-reload" size="small" onClick={() => tree.current?.reload()}>
              Reload
            </Button>
          </Stack>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            Drag a department onto another to move it there with its subtree; between two to move it into their
            parent.
          </Typography>
          {status && (
            <Alert
              severity={status.severity}
              data-testid={status.severity === 'error' ? 'tree-error' : 'tree-status'}
              onClose={() => setStatus(null)}
              sx={{ mb: 1 }}
            >
              {status.text}
            </Alert>
          )}
          <DepartmentTree
            ref={tree}
            selectedId={selected?.id}
            onSelect={(id, name) => setSelected({ id, name })}
            onMove={moveDepartment}
            onMoved={(err, m) => {
              if (err) setStatus({ severity: 'error', text: moveMessage(err, m) });
              else if (m.same) setStatus({ severity: 'info', text: 'Sub-departments are kept in creation order.' });
              else setStatus({ severity: 'success', text: `Moved ${m.name} under ${m.to ?? 'the top level'}.` });
            }}
          />
        </Paper>
      </Grid>
      <Grid size={{ xs: 12, md: 7 }}>
        <Paper sx={{ p: 2 }}>
          {selected ? (
            <DepartmentMembers key={selected.id} id={selected.id} />
          ) : (
            <Typography color="text.secondary">Select a department to see its members.</Typography>
          )}
        </Paper>
      </Grid>
    </Grid>
  );
}

function DepartmentMembers({ id }) {
  const [info, setInfo] = useState(null);
  const paged = usePaged(async (first, after) => {
    const d = await gql(
      `query ConsoleDepartmentMembers($id: ID!, $first: Int, $after: String) {
  department(id: $id) {
    id name memberCount managers { id username } ${provenanceFields}
    ancestors { id name }
    members(first: $first, after: $after) {
      totalCount
      edges { cursor node { id username roles { role { name } priority } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`,
      { id, first, after },
    );
    if (!d.department) throw new Error('This department no longer exists.');
    setInfo(d.department);
    return d.department.members;
  });
  return (
    <Box data-testid="department-members">
      <Typography variant="h6" component="h2" data-testid="department-title">
        {info ? info.name : '…'}
      </Typography>
      {info && (
        <Typography variant="body2" color="text.secondary" data-testid="department-path">
          {[...info.ancestors.map(a => a.name), info.name].join(' › ')}
          {paged.total != null && ` · ${paged.total} member${paged.total === 1 ? '' : 's'}`}
        </Typography>
      )}
      <Provenance object={info} testid="department-provisioning" />
      {info?.managers?.length > 0 && (
        <Typography variant="body2" sx={{ mt: 1 }}>
          Managers: {info.managers.map(m => m.username).join(', ')}
        </Typography>
      )}
      <Table size="small" sx={{ mt: 1 }}>
        <TableHead>
          <TableRow>
            <TableCell>Username</TableCell>
            <TableCell>User id</TableCell>
            <TableCell>Roles</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {paged.edges.map(({ node }) => (
            <TableRow key={node.id} data-testid={`member-${node.username}`}>
              <TableCell>{node.username}</TableCell>
              <TableCell>{node.id}</TableCell>
              <TableCell>
                {node.roles.map(r => (
                  <Chip key={r.role.name} size="small" label={`${r.role.name} ${r.priority}`} sx={{ mr: 0.5 }} />
                ))}
              </TableCell>
            </TableRow>
          ))}
          {!paged.loading && !paged.error && paged.edges.length === 0 && (
            <TableRow>
              <TableCell colSpan={3}>No members.</TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Pager paged={paged} id="members-pager" />
    </Box>
  );
}
