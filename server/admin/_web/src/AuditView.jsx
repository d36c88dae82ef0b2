// The audit log (Query.auditLog), newest first, a page at a time, filtered
// by actor (a username, looked up to its id), target (a global id: a user's,
// "role:<n>", "department:<n>" or a report's), action, and a time range. Each event's
// actor and target are shown by name where they still exist; a change a
// provisioning client (SCIM) made has no actor and shows the client.
import {
  Alert,
  Box,
  Button,
  FormControl,
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
import { useState } from 'react';
import { auditActions, describe, gql } from './api.js';
import { Pager, usePaged } from './paging.jsx';

const emptyForm = { actor: '', target: '', action: '', since: '', until: '' };

// rfc3339 turns a datetime-local value (the browser's time zone) into an
// RFC 3339 time, or null for an empty one.
const rfc3339 = local => (local ? new Date(local).toISOString() : null);

export function AuditView() {
  const [form, setForm] = useState(emptyForm);
  const [filter, setFilter] = useState({});
  const [error, setError] = useState(null);
  const [generation, setGeneration] = useState(0);
  const field = name => ({
    value: form[name],
    onChange: e => setForm(f => ({ ...f, [name]: e.target.value })),
  });

  const apply = async e => {
    e?.preventDefault();
    setError(null);
    try {
      const next = {};
      if (form.actor.trim()) {
        const d = await gql('query ConsoleActor($username: String!) { userByUsername(username: $username) { id } }', {
          username: form.actor.trim(),
        });
        if (!d.userByUsername) throw new Error(`There is no user ${form.actor.trim()}.`);
        next.actorId = d.userByUsername.id;
      }
      if (form.target.trim()) next.targetId = form.target.trim();
      if (form.action) next.action = form.action;
      if (form.since) next.since = rfc3339(form.since);
      if (form.until) next.until = rfc3339(form.until);
      setFilter(next);
      setGeneration(g => g + 1);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Paper sx={{ p: 2 }}>
      <Typography variant="h6" component="h2" sx={{ mb: 1 }}>
        Audit log
      </Typography>
      <Box component="form" onSubmit={apply}>
        <Stack direction={{ xs: 'column', lg: 'row' }} spacing={1} sx={{ mb: 2 }}>
          <TextField id="audit-actor" size="small" label="Actor (username)" {...field('actor')} />
          <TextField id="audit-target" size="small" label="Target id" placeholder="department:2" {...field('target')} />
          <FormControl size="small" sx={{ minWidth: 220 }}>
            <InputLabel id="audit-action-label">Action</InputLabel>
            <Select labelId="audit-action-label" id="audit-action" label="Action" {...field('action')}>
              <MenuItem value="">Any</MenuItem>
              {auditActions.map(a => (
                <MenuItem key={a} value={a} data-testid={`action-option-${a}`}>
                  {a}
                </MenuItem>
              ))}
            </Select>
          </FormControl>
          <TextField
            id="audit-since"
            size="small"
            type="datetime-local"
            label="Since"
            slotProps={{ inputLabel: { shrink: true } }}
            {...field('since')}
          />
          <TextField
            id="audit-until"
            size="small"
            type="datetime-local"
            label="Until"
            slotProps={{ inputLabel: { shrink: true } }}
            {...field('until')}
          />
          <Button id="audit-apply" type="submit" variant="contained">
            Apply
          </Button>
          <Button
            id="audit-reset"
            onClick={() => {
              setForm(emptyForm);
              setFilter({});
              setGeneration(g => g + 1);
            }}
          >
            Reset
          </Button>
        </Stack>
      </Box>
      {error && (
        <Alert severity="error" sx={{ mb: 1 }} data-testid="audit-filter-error">
          {describe(error)}
        </Alert>
      )}
      <AuditEvents key={generation} filter={filter} />
    </Paper>
  );
}

// labels returns a name for each global id that still names something.
async function labels(ids) {
  if (ids.length === 0) return new Map();
  const d = await gql(
    `query ConsoleAuditTargets($ids: [ID!]!) {
  nodes(ids: $ids) { id ... on User { username } ... on Role { name } ... on Department { name } }
}`,
    { ids },
  );
  return new Map(d.nodes.filter(Boolean).map(n => [n.id, n.username ?? n.name]));
}

function AuditEvents({ filter }) {
  const paged = usePaged(async (first, after) => {
    const d = await gql(
      `query ConsoleAuditLog($first: Int, $after: String, $filter: AuditFilter) {
  auditLog(first: $first, after: $after, filter: $filter) {
    edges { cursor node { id at actor { id username } client action targetId before after requestId } }
    pageInfo { hasNextPage endCursor }
  }
}`,
      { first, after, filter },
    );
    const conn = d.auditLog;
    let names = new Map();
    try {
      names = await labels([...new Set(conn.edges.map(e => e.node.targetId))]);
    } catch {
      // The names are a convenience: the ids are shown anyway.
    }
    return { ...conn, names };
  }, 25);
  const names = paged.conn?.names ?? new Map();
  return (
    <>
      <Table size="small" data-testid="audit-events">
        <TableHead>
          <TableRow>
            <TableCell>When</TableCell>
            <TableCell>Actor</TableCell>
            <TableCell>Action</TableCell>
            <TableCell>Target</TableCell>
            <TableCell>Before</TableCell>
            <TableCell>After</TableCell>
            <TableCell>Request</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {paged.edges.map(({ node: ev }) => (
            <TableRow
              key={ev.id}
              data-testid="audit-row"
              data-action={ev.action}
              data-target={ev.targetId}
              data-actor={ev.actor?.username ?? ''}
              data-client={ev.client ?? ''}
            >
              <TableCell sx={{ whiteSpace: 'nowrap' }} title={ev.at}>
                {new Date(ev.at).toLocaleString()}
              </TableCell>
              <TableCell>
                {ev.actor?.username ?? (ev.client ? <span title="provisioning client (SCIM)">{`SCIM: ${ev.client}`}</span> : '—')}
              </TableCell>
              <TableCell>{ev.action}</TableCell>
              <TableCell>
                {names.get(ev.targetId) ? `${names.get(ev.targetId)} (${ev.targetId})` : ev.targetId}
              </TableCell>
              <TableCell sx={{ fontFamily: 'monospace', fontSize: 12, wordBreak: 'break-all' }}>{ev.before ?? ''}</TableCell>
              <TableCell sx={{ fontFamily: 'monospace', fontSize: 12, wordBreak: 'break-all' }}>{ev.after ?? ''}</TableCell>
              <TableCell sx={{ fontFamily: 'monospace', fontSize: 12 }}>{ev.requestId ?? ''}</TableCell>
            </TableRow>
          ))}
          {!paged.loading && !paged.error && paged.edges.length === 0 && (
            <TableRow>
              <TableCell colSpan={7}>No events.</TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Pager paged={paged} id="audit-pager" />
    </>
  );
}
