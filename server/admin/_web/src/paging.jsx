// Paging through a Relay connection (first/after) with MUI's TablePagination:
// the cursors of the pages seen so far are kept, so "previous" goes back
// exactly and "next" follows endCursor. The total is the connection's
// totalCount where the API gives one; otherwise MUI's "more than N" (-1)
// while hasNextPage.
import { Alert, LinearProgress, TablePagination } from '@mui/material';
import { useEffect, useState } from 'react';
import { describe } from './api.js';

// usePaged calls load(first, after) → a connection ({edges, pageInfo,
// totalCount?}) for the current page, again on reload(). A component keyed
// by its filter starts over on page 0 when the filter changes.
export function usePaged(load, pageSize = 20) {
  const [page, setPage] = useState(0);
  const [cursors, setCursors] = useState([null]);
  const [tick, setTick] = useState(0);
  const [res, setRes] = useState({ loading: true, error: null, conn: null });
  useEffect(() => {
    let live = true;
    setRes(r => ({ ...r, loading: true, error: null }));
    load(pageSize, cursors[page]).then(
      conn => {
        if (!live) return;
        setRes({ loading: false, error: null, conn });
        if (conn.pageInfo.hasNextPage) {
          setCursors(c => [...c.slice(0, page + 1), conn.pageInfo.endCursor]);
        }
      },
      error => live && setRes({ loading: false, error, conn: null }),
    );
    return () => {
      live = false;
    };
    // load is a new function on every render: page and tick are what
    // change the answer (the component is keyed by what load depends on).
  }, [page, tick]);
  const edges = res.conn?.edges ?? [];
  const hasNext = !!res.conn?.pageInfo.hasNextPage;
  const total = res.conn?.totalCount ?? null;
  return {
    ...res,
    edges,
    page,
    pageSize,
    hasNext,
    total,
    count: total ?? (hasNext ? -1 : page * pageSize + edges.length),
    setPage: p => (p < page || hasNext) && setPage(p),
    reload: () => setTick(t => t + 1),
  };
}

// Pager is the table's footer: the rows shown, of how many, and the
// previous and next buttons (ids <id>-prev and <id>-next), with the load's
// progress and error above.
export function Pager({ paged, id }) {
  return (
    <>
      {paged.loading && <LinearProgress data-testid={`${id}-loading`} />}
      {paged.error && (
        <Alert severity="error" data-testid={`${id}-error`}>
          {describe(paged.error)}
        </Alert>
      )}
      <TablePagination
        component="div"
        id={id}
        count={paged.count}
        page={paged.page}
        rowsPerPage={paged.pageSize}
        rowsPerPageOptions={[]}
        onPageChange={(_, p) => paged.setPage(p)}
        slotProps={{
          actions: {
            previousButton: { id: `${id}-prev` },
            nextButton: { id: `${id}-next`, disabled: paged.loading || !paged.hasNext },
          },
        }}
      />
    </>
  );
}
