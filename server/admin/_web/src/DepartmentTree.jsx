// The department tree: react-arborist over the gateway's departments, loaded
// lazily (topDepartments, then a department's subDepartments when it is first
// opened, every page of them), each with its member count (memberCount) and
// whether it has sub-departments (the first of them, asked with it).
//
// With onMove, a department dragged onto another (or between two, which
// means into their parent; sub-departments stay in creation order) is moved
// there with moveDepartment. The tree changes only when the gateway has
// moved it: then the two parents' lists are loaded again (the moved
// department keeps what was loaded under it). A refused move, e.g. a cycle
// that another admin's change made (BAD_USER_INPUT, reason DEPARTMENT_CYCLE;
// the tree itself refuses drops into a department's own subtree), leaves
// the tree as it was and is reported through onMoved(error).
import { Alert, Button, Chip, Tooltip } from '@mui/material';
import { forwardRef, useCallback, useEffect, useImperativeHandle, useRef, useState } from 'react';
import { Tree } from 'react-arborist';
import { useDragDropManager } from 'react-dnd';
import { describe, gql } from './api.js';

function fragment() {
  return `fragment ConsoleDept on Department {
  id name memberCount
  first: subDepartments(first: 1) { edges { node { id } } }
}`;
}

// loadChildren returns every sub-department of parentId (null: the top level)
// as tree nodes, or null when the department is gone.
async function loadChildren(parentId) {
  const page = 'edges { node { ...ConsoleDept } } pageInfo { hasNextPage endCursor }';
  const list = [];
  let after = null;
  for (;;) {
    let conn;
    if (parentId == null) {
      const d = await gql(
        `query ConsoleTopDepartments($after: String) { conn: topDepartments(first: 100, after: $after) { ${page} } } ${fragment()}`,
        { after },
      );
      conn = d.conn;
    } else {
      const d = await gql(
        `query ConsoleSubDepartments($id: ID!, $after: String) {
  department(id: $id) { id conn: subDepartments(first: 100, after: $after) { ${page} } }
} ${fragment()}`,
        { id: parentId, after },
      );
      if (!d.department) return null;
      conn = d.department.conn;
    }
    for (const { node } of conn.edges) {
      list.push({
        id: node.id,
        name: node.name,
        memberCount: node.memberCount,
        hasChildren: node.first.edges.length > 0,
        loaded: false,
        children: [],
      });
    }
    if (!conn.pageInfo.hasNextPage) return list;
    after = conn.pageInfo.endCursor;
  }
}

function indexOf(nodes, map = new Map()) {
  for (const n of nodes) {
    map.set(n.id, n);
    indexOf(n.children, map);
  }
  return map;
}

// withChildren returns nodes with parentId's children replaced by list
// (parentId null: the top level), each keeping what was loaded under it.
// A department has one parent: the departments of list leave any other
// list of the tree that still holds them (one loaded before they moved, or
// whose load after the move was overtaken), so that none shows twice.
function withChildren(nodes, parentId, list) {
  const known = indexOf(nodes);
  const ids = new Set(list.map(n => n.id));
  const merged = list.map(n => {
    const old = known.get(n.id);
    return old?.loaded ? { ...n, loaded: true, children: old.children, hasChildren: old.children.length > 0 || n.hasChildren } : n;
  });
  // walk drops list's departments wherever they are and puts merged under
  // parentId; with parentId null no node matches, so it only drops.
  const walk = ns =>
    ns
      .filter(n => !ids.has(n.id))
      .map(n =>
        n.id === parentId
          ? { ...n, loaded: true, hasChildren: merged.length > 0, children: merged }
          : { ...n, children: walk(n.children) },
      );
  if (parentId == null) return merged.map(n => ({ ...n, children: walk(n.children) }));
  return walk(nodes);
}

// DepartmentTree shows the tree; a click selects a department (onSelect(id,
// name)). testid prefixes the rows' data-testid (<testid>-<id>); each row
// also carries data-name and data-parent (the parent's id, "" at the top).
export const DepartmentTree = forwardRef(function DepartmentTree(
  { selectedId, onSelect, onMove, onMoved, height = 480, testid = 'dept' },
  ref,
) {
  const [nodes, setNodes] = useState([]);
  const [error, setError] = useState(null);
  const tree = useRef(null);
  const loads = useRef({ count: 0, latest: new Map() }); // parent id ('' at the top) → number of its latest load
  const dndManager = useDragDropManager();

  // reload loads the sub-departments of each of parentIds (null: the top
  // level) again and shows them at once; a list whose parent was loaded
  // again since this load started is left out.
  const reload = useCallback(async (...parentIds) => {
    const started = parentIds.map(id => {
      const n = ++loads.current.count;
      loads.current.latest.set(id ?? '', n);
      return n;
    });
    const lists = await Promise.all(parentIds.map(loadChildren));
    setNodes(ns =>
      parentIds.reduce(
        (out, id, i) => (lists[i] && loads.current.latest.get(id ?? '') === started[i] ? withChildren(out, id, lists[i]) : out),
        ns,
      ),
    );
  }, []);

  const reloadAll = useCallback(() => {
    setError(null);
    loads.current.latest.clear();
    setNodes([]);
    reload(null).catch(setError);
  }, [reload]);

  useEffect(reloadAll, [reloadAll]);

  // reload() starts over from the top level.
  useImperativeHandle(ref, () => ({ reload: reloadAll }), [reloadAll]);

  // Open departments whose sub-departments are not loaded get them: when
  // opened, and after a reload from the top (react-arborist keeps which
  // departments are open, by id).
  const pending = useRef(new Set());
  const loadIfOpen = id => {
    if (pending.current.has(id) || !tree.current?.isOpen(id)) return;
    pending.current.add(id);
    reload(id)
      .catch(setError)
      .finally(() => pending.current.delete(id));
  };
  const onToggle = id => {
    if (!tree.current?.get(id)?.data.loaded) loadIfOpen(id);
  };
  useEffect(() => {
    for (const n of indexOf(nodes).values()) {
      if (!n.loaded) loadIfOpen(n.id);
    }
    // loadIfOpen reads only refs and the stable reload.
  }, [nodes]);

  const move = async ({ dragNodes, parentId }) => {
    const dragged = dragNodes[0];
    if (!dragged) return;
    const from = dragged.parent && !dragged.parent.isRoot ? dragged.parent.id : null;
    if (from === parentId) {
      onMoved?.(null, { name: dragged.data.name, same: true });
      return;
    }
    const to = parentId == null ? null : tree.current?.get(parentId)?.data;
    try {
      await onMove(dragged.data.id, parentId);
    } catch (err) {
      onMoved?.(err, { name: dragged.data.name, to: to?.name ?? null });
      return;
    }
    try {
      // Through reload, so that a load of either list that started before
      // the move (react-arborist opens the target on the drop) cannot
      // overwrite the lists loaded after it.
      await reload(from, parentId);
      if (parentId != null) tree.current?.open(parentId);
      onMoved?.(null, { name: dragged.data.name, to: to?.name ?? null });
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div className="tree-frame" data-testid={`${testid}-tree`}>
      {error && (
        <Alert
          severity="error"
          data-testid={`${testid}-tree-error`}
          action={
            <Button color="inherit" size="small" onClick={reloadAll}>
              Reload
            </Button>
          }
        >
          {describe(error)}
        </Alert>
      )}
      <Tree
        ref={tree}
        data={nodes}
        openByDefault={false}
        width="100%"
        height={height}
        rowHeight={32}
        indent={22}
        disableMultiSelection
        disableEdit
        disableDrag={!onMove}
        disableDrop={!onMove}
        onMove={onMove ? move : undefined}
        onToggle={onToggle}
        onActivate={node => onSelect?.(node.data.id, node.data.name)}
        selection={selectedId ?? undefined}
        dndManager={dndManager}
        aria-label="Departments"
      >
        {props => <DepartmentRow {...props} testid={testid} />}
      </Tree>
    </div>
  );
});

function DepartmentRow({ node, style, dragHandle, testid, preview }) {
  const d = node.data;
  // The drag preview that react-arborist draws under the pointer while a
  // department is dragged: the name only, without a row's test ids and data
  // attributes, so that nothing takes it for the row itself.
  if (preview) {
    return (
      <div style={style} className="dept-row dept-preview" aria-hidden="true">
        <span className="dept-name">{d.name}</span>
      </div>
    );
  }
  const parent = node.parent && !node.parent.isRoot ? node.parent.id : '';
  const classes = ['dept-row', node.isSelected && 'selected', node.willReceiveDrop && 'drop-target'];
  return (
    <div
      ref={dragHandle}
      style={style}
      className={classes.filter(Boolean).join(' ')}
      data-testid={`${testid}-${d.id}`}
      data-name={d.name}
      data-parent={parent}
      data-open={node.isOpen ? 'true' : 'false'}
    >
      <button
        type="button"
        className="dept-toggle"
        data-testid={`${testid}-toggle-${d.id}`}
        aria-label={node.isOpen ? `Close ${d.name}` : `Open ${d.name}`}
        onClick={e => {
          e.stopPropagation();
          node.toggle();
        }}
      >
        {d.hasChildren ? (node.isOpen ? '▾' : '▸') : '·'}
      </button>
      <span className="dept-name">{d.name}</span>
      {d.memberCount != null && (
        <Tooltip title="Members directly in this department">
          <Chip size="small" label={d.memberCount} data-testid="member-count" />
        </Tooltip>
      )}
    </div>
  );
}
