// Reports, for holders of MANAGE_REPORTS: the moderation queue
// (Query.reports, newest first, open ones at first), filtered by status,
// category, reported user and assignee (usernames, looked up to their ids),
// with the filter's total from the gateway's counters; a selected report
// with its posts and comments as they were when reported, and its actions:
// assign to oneself or unassign (assignReport), resolve with one of
// DISMISS, DELETE_CONTENT and SUSPEND_USER (for a number of days, or until
// lifted), with a note (resolveReport), and reopen (reopenReport). The
// reported user's view (UserView) opens from the report.
import {
  Alert,
  Box,
  Button,
  Checkbox,
  Chip,
  FormControl,
  FormControlLabel,
  Grid,
  InputLabel,
  LinearProgress,
  MenuItem,
  Paper,
  Radio,
  RadioGroup,
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
import { describe, gql, reportActions, reportCategories, untilIn, when } from './api.js';
import { Pager, usePaged } from './paging.jsx';
import { SuspensionChip, UserView, suspensionFields } from './UserView.jsx';
import { useViewer } from './viewer.jsx';

const emptyForm = { status: 'OPEN', category: '', target: '', assignee: '', mine: false };

// userId looks a username up to its id; an unknown one throws.
async function userId(username) {
  const d = await gql('query ConsoleReportUser($username: String!) { userByUsername(username: $username) { id } }', { username });
  if (!d.userByUsername) throw new Error(`There is no user ${username}.`);
  return d.userByUsername.id;
}

export function ReportsView() {
  const { viewer } = useViewer();
  const [form, setForm] = useState(emptyForm);
  const [filter, setFilter] = useState({ status: 'OPEN' });
  const [error, setError] = useState(null);
  const [generation, setGeneration] = useState(0); // reloads the queue after a change
  const [selected, setSelected] = useState(null); // a report's id
  const field = name => ({
    value: form[name],
    onChange: e => setForm(f => ({ ...f, [name]: e.target.value })),
  });

  const apply = async e => {
    e?.preventDefault();
    setError(null);
    try {
      const next = {};
      if (form.status) next.status = form.status;
      if (form.category) next.category = form.category;
      if (form.target.trim()) next.targetUserId = await userId(form.target.trim());
      if (form.mine) next.assignedToId = viewer.id;
      else if (form.assignee.trim()) next.assignedToId = await userId(form.assignee.trim());
      setFilter(next);
      setGeneration(g => g + 1);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Grid container spacing={2}>
      <Grid size={{ xs: 12, lg: 7 }}>
        <Paper sx={{ p: 2 }}>
          <Typography variant="h6" component="h2" sx={{ mb: 1 }}>
            Reports
          </Typography>
          <Box component="form" onSubmit={apply}>
            <Stack direction={{ xs: 'column', md: 'row' }} spacing={1} sx={{ mb: 2, flexWrap: 'wrap', alignItems: { md: 'center' } }}>
              <FormControl size="small" sx={{ minWidth: 130 }}>
                <InputLabel id="reports-status-label">Status</InputLabel>
                <Select labelId="reports-status-label" id="reports-status" label="Status" {...field('status')}>
                  <MenuItem value="">Any</MenuItem>
                  <MenuItem value="OPEN" data-testid="status-option-OPEN">
                    Open
                  </MenuItem>
                  <MenuItem value="RESOLVED" data-testid="status-option-RESOLVED">
                    Resolved
                  </MenuItem>
                </Select>
              </FormControl>
              <FormControl size="small" sx={{ minWidth: 130 }}>
                <InputLabel id="reports-category-label">Category</InputLabel>
                <Select labelId="reports-category-label" id="reports-category" label="Category" {...field('category')}>
                  <MenuItem value="">Any</MenuItem>
                  {reportCategories.map(c => (
                    <MenuItem key={c} value={c} data-testid={`category-option-${c}`}>
                      {c}
                    </MenuItem>
                  ))}
                </Select>
              </FormControl>
              <TextField id="reports-target" size="small" label="Reported user" {...field('target')} />
              <TextField id="reports-assignee" size="small" label="Assigned to" disabled={form.mine} {...field('assignee')} />
              <FormControlLabel
                control={<Checkbox id="reports-mine" checked={form.mine} onChange={e => setForm(f => ({ ...f, mine: e.target.checked }))} />}
                label="Mine"
              />
              <Button id="reports-apply" type="submit" variant="contained">
                Apply
              </Button>
              <Button
                id="reports-reset"
                onClick={() => {
                  setForm(emptyForm);
                  setFilter({ status: 'OPEN' });
                  setGeneration(g => g + 1);
                }}
              >
                Reset
              </Button>
            </Stack>
          </Box>
          {error && (
            <Alert severity="error" sx={{ mb: 1 }} data-testid="reports-filter-error">
              {describe(error)}
            </Alert>
          )}
          <ReportList key={generation} filter={filter} selectedId={selected} onSelect={setSelected} />
        </Paper>
      </Grid>
      <Grid size={{ xs: 12, lg: 5 }}>
        <Paper sx={{ p: 2 }}>
          {selected ? (
            <ReportDetail key={selected} id={selected} onChanged={() => setGeneration(g => g + 1)} />
          ) : (
            <Typography color="text.secondary">Select a report to see what was reported and to act on it.</Typography>
          )}
        </Paper>
      </Grid>
    </Grid>
  );
}

function ReportList({ filter, selectedId, onSelect }) {
  const paged = usePaged(async (first, after) => {
    const d = await gql(
      `query ConsoleReports($first: Int, $after: String, $filter: ReportFilter) {
  reports(first: $first, after: $after, filter: $filter) {
    totalCount
    edges { cursor node {
      id status category createdAt action
      reporter { id username } target { id username } assignedTo { id username }
      posts { id } comments { id }
    } }
    pageInfo { hasNextPage endCursor }
  }
}`,
      { first, after, filter },
    );
    return d.reports;
  });
  return (
    <>
      {paged.total != null && (
        <Typography variant="body2" sx={{ mb: 1 }} data-testid="reports-total">
          {paged.total} {filter.status ? filter.status.toLowerCase() : ''} report{paged.total === 1 ? '' : 's'}
        </Typography>
      )}
      <Table size="small" data-testid="report-list">
        <TableHead>
          <TableRow>
            <TableCell>Reported</TableCell>
            <TableCell>Category</TableCell>
            <TableCell>User</TableCell>
            <TableCell>By</TableCell>
            <TableCell align="right">Items</TableCell>
            <TableCell>Status</TableCell>
            <TableCell>Assigned to</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {paged.edges.map(({ node: r }) => (
            <TableRow
              key={r.id}
              hover
              selected={r.id === selectedId}
              onClick={() => onSelect(r.id)}
              sx={{ cursor: 'pointer' }}
              data-testid="report-row"
              data-id={r.id}
              data-status={r.status}
              data-target={r.target?.username ?? ''}
              data-assignee={r.assignedTo?.username ?? ''}
            >
              <TableCell>{when(r.createdAt)}</TableCell>
              <TableCell>{r.category}</TableCell>
              <TableCell>{r.target?.username ?? '—'}</TableCell>
              <TableCell>{r.reporter?.username ?? '—'}</TableCell>
              <TableCell align="right">{r.posts.length + r.comments.length}</TableCell>
              <TableCell>{r.action ? `${r.status} · ${r.action}` : r.status}</TableCell>
              <TableCell>{r.assignedTo?.username ?? '—'}</TableCell>
            </TableRow>
          ))}
          {!paged.loading && !paged.error && paged.edges.length === 0 && (
            <TableRow>
              <TableCell colSpan={7}>No reports.</TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Pager paged={paged} id="reports-pager" />
    </>
  );
}

// reportFields are what the detail shows of a report; the reported user's
// suspension only to holders of MANAGE_USERS (who alone may see it).
const reportFields = withSuspension => `id status category comment createdAt action note resolvedAt
  reporter { id username } assignedTo { id username }
  target { id username ${withSuspension ? suspensionFields : ''} }
  posts { id content createdAt } comments { id content createdAt }`;

function ReportDetail({ id, onChanged }) {
  const { viewer, can } = useViewer();
  const fields = reportFields(can('MANAGE_USERS'));
  const [report, setReport] = useState(null);
  const [error, setError] = useState(null);
  const [status, setStatus] = useState(null); // {severity, text}
  const [busy, setBusy] = useState(false);
  const [action, setAction] = useState('DISMISS');
  const [note, setNote] = useState('');
  const [days, setDays] = useState('');
  const [userOpen, setUserOpen] = useState(false);

  const load = () =>
    gql(`query ConsoleReport($id: ID!) { node(id: $id) { ... on Report { ${fields} } } }`, { id }).then(
      d => (d.node ? setReport(d.node) : setError(new Error('This report is not there.'))),
      setError,
    );
  useEffect(() => {
    load();
  }, [id]);

  const act = async (mutation, vars, text) => {
    setBusy(true);
    setStatus(null);
    try {
      const d = await gql(mutation, vars);
      setReport(d.r);
      setStatus({ severity: 'success', text: text(d.r) });
      onChanged();
    } catch (err) {
      setStatus({ severity: 'error', text: describe(err) });
    } finally {
      setBusy(false);
    }
  };
  const assign = toSelf =>
    act(
      `mutation ConsoleAssignReport($id: ID!, $toSelf: Boolean!) { r: assignReport(id: $id, toSelf: $toSelf) { ${fields} } }`,
      { id, toSelf },
      r => (r.assignedTo ? `Assigned to ${r.assignedTo.username}.` : 'Assigned to no one.'),
    );
  const resolve = e => {
    e.preventDefault();
    let suspendUntil = null;
    if (action === 'SUSPEND_USER') {
      try {
        suspendUntil = untilIn(days);
      } catch (err) {
        return setStatus({ severity: 'error', text: err.message });
      }
    }
    act(
      `mutation ConsoleResolveReport($id: ID!, $action: ReportAction!, $note: String, $suspendUntil: Time) {
  r: resolveReport(id: $id, action: $action, note: $note, suspendUntil: $suspendUntil) { ${fields} }
}`,
      { id, action, note: note.trim() || null, suspendUntil },
      r => `Resolved: ${r.action}.`,
    );
  };
  const reopen = () =>
    act(`mutation ConsoleReopenReport($id: ID!) { r: reopenReport(id: $id) { ${fields} } }`, { id }, () => 'Reopened.');

  if (error) return <Alert severity="error">{describe(error)}</Alert>;
  if (!report) return <LinearProgress />;
  const r = report;
  const open = r.status === 'OPEN';
  return (
    <Box data-testid="report-detail" data-id={r.id} data-status={r.status} data-action={r.action ?? ''} data-assignee={r.assignedTo?.username ?? ''}>
      <Typography variant="h6" component="h2" data-testid="report-title">
        {r.category} · {r.status}
        {r.action && ` · ${r.action}`}
      </Typography>
      <Typography variant="body2" color="text.secondary">
        {r.id} · reported {when(r.createdAt)}
        {r.reporter && ` by ${r.reporter.username}`}
      </Typography>
      <Stack direction="row" spacing={1} sx={{ my: 1, alignItems: 'center', flexWrap: 'wrap' }}>
        <Typography>
          User: <b data-testid="report-target">{r.target?.username ?? 'deleted'}</b>
        </Typography>
        {r.target && <SuspensionChip user={r.target} />}
        {r.target && (
          <Button id="report-open-target" size="small" onClick={() => setUserOpen(true)}>
            Open user
          </Button>
        )}
      </Stack>
      {r.comment && (
        <Typography variant="body2" sx={{ mb: 1 }} data-testid="report-comment">
          “{r.comment}”
        </Typography>
      )}
      <Typography variant="subtitle2">As reported</Typography>
      <Table size="small" sx={{ mb: 1 }}>
        <TableBody>
          {r.posts.map(p => (
            <TableRow key={`p${p.id}`} data-testid="reported-post" data-id={p.id}>
              <TableCell>
                <Chip size="small" label="post" />
              </TableCell>
              <TableCell sx={{ whiteSpace: 'pre-wrap' }}>{p.content}</TableCell>
              <TableCell>{when(p.createdAt)}</TableCell>
            </TableRow>
          ))}
          {r.comments.map(c => (
            <TableRow key={`c${c.id}`} data-testid="reported-comment" data-id={c.id}>
              <TableCell>
                <Chip size="small" label="comment" />
              </TableCell>
              <TableCell sx={{ whiteSpace: 'pre-wrap' }}>{c.content}</TableCell>
              <TableCell>{when(c.createdAt)}</TableCell>
            </TableRow>
          ))}
          {r.posts.length + r.comments.length === 0 && (
            <TableRow>
              <TableCell>The report names the user only.</TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mb: 1 }}>
        <Typography data-testid="report-assignee">Assigned to {r.assignedTo ? r.assignedTo.username : 'no one'}</Typography>
        {open && r.assignedTo?.id !== viewer.id && (
          <Button id="report-assign" size="small" variant="outlined" disabled={busy} onClick={() => assign(true)}>
            Assign to me
          </Button>
        )}
        {open && r.assignedTo && (
          <Button id="report-unassign" size="small" disabled={busy} onClick={() => assign(false)}>
            Unassign
          </Button>
        )}
      </Stack>
      {open ? (
        <Box component="form" onSubmit={resolve}>
          <RadioGroup value={action} onChange={e => setAction(e.target.value)}>
            {reportActions.map(a => (
              <FormControlLabel
                key={a.name}
                value={a.name}
                control={<Radio size="small" id={`report-action-${a.name}`} />}
                label={
                  <Typography variant="body2">
                    {a.name} <span style={{ opacity: 0.7 }}>— {a.about}</span>
                  </Typography>
                }
              />
            ))}
          </RadioGroup>
          <Stack direction="row" spacing={1} sx={{ my: 1 }}>
            <TextField id="report-note" size="small" label="Note" value={note} onChange={e => setNote(e.target.value)} sx={{ flexGrow: 1 }} />
            {action === 'SUSPEND_USER' && (
              <TextField
                id="report-suspend-days"
                size="small"
                type="number"
                label="Days"
                placeholder="until lifted"
                value={days}
                onChange={e => setDays(e.target.value)}
                slotProps={{ htmlInput: { min: 0, step: 'any' }, inputLabel: { shrink: true } }}
                sx={{ width: 140 }}
              />
            )}
            <Button id="report-resolve" type="submit" variant="contained" disabled={busy}>
              Resolve
            </Button>
          </Stack>
        </Box>
      ) : (
        <Stack spacing={1}>
          <Typography variant="body2" data-testid="report-resolution">
            Resolved {when(r.resolvedAt)}: {r.action}
            {r.note && ` — ${r.note}`}
          </Typography>
          <Box>
            <Button id="report-reopen" variant="outlined" disabled={busy} onClick={reopen}>
              Reopen
            </Button>
          </Box>
        </Stack>
      )}
      {status && (
        <Alert severity={status.severity} data-testid="report-status" onClose={() => setStatus(null)} sx={{ mt: 1 }}>
          {status.text}
        </Alert>
      )}
      {userOpen && (
        <UserView
          userId={r.target.id}
          onClose={() => {
            setUserOpen(false);
            load();
          }}
        />
      )}
    </Box>
  );
}
