package department

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Department paths. Each department row keeps its ancestors, top level
// first (tables.ColPath), a copy of the chain of parents, which are the
// authority. Reading a department's ancestors is then one batched read of
// the rows its path names, verified against their parents: the path is
// used only when every named row exists and each one's parent is the one
// before it (and the last is the department's parent). A path that fails
// the check — the trace of a move that died before rewriting its
// subtree's paths, or a department made before paths were kept — falls
// back to walking up one Get per level, and is rewritten. Authorization
// (package authz) thus costs one batched read whatever the depth.

// ancestorsOf returns d's ancestors, root first, excluding d: one GetMany
// of the rows d's path names when it verifies, the walk otherwise (then
// writing the path it found).
func (s *Service) ancestorsOf(ctx context.Context, d *org.Department) ([]*org.Department, error) {
	if d.Parent == weibo.RootDept {
		return nil, nil
	}
	if d.HasPath && len(d.Path) > 0 {
		up, err := s.Get(ctx, d.Path)
		if err != nil {
			return nil, err
		}
		if org.VerifyChain(d, up) {
			return up, nil
		}
	}
	up, err := s.walkAncestors(ctx, d)
	if err != nil {
		return nil, err
	}
	// Rewrite the path as found (idempotent; a racing move rewrites it again).
	if err := s.putPath(ctx, d.ID, d.Parent, org.IDsOf(up)); err != nil {
		return nil, err
	}
	return up, nil
}

// rewritePaths writes the paths of sub — a moved department first, then
// its descendants in breadth-first order (subtree) — with base the moved
// department's new ancestors. Each is a CheckAndPut on the parent the
// department had when read, so a department deleted or moved meanwhile is
// left alone (its row is not brought back; a stale path is caught by
// verifyChain).
func (s *Service) rewritePaths(ctx context.Context, sub []*org.Department, base []weibo.DeptID) error {
	paths := map[weibo.DeptID][]weibo.DeptID{sub[0].ID: base}
	for i, d := range sub {
		p := paths[d.ID]
		if i > 0 {
			parent, ok := paths[d.Parent]
			if !ok {
				continue // not under the moved department any more
			}
			p = append(append([]weibo.DeptID(nil), parent...), d.Parent)
			paths[d.ID] = p
		}
		parent := d.Parent
		if i == 0 {
			parent = weibo.RootDept
			if len(base) > 0 {
				parent = base[len(base)-1]
			}
		}
		if err := s.putPath(ctx, d.ID, parent, p); err != nil {
			return err
		}
	}
	return nil
}

// putPath writes did's path, if did's parent is still parent.
func (s *Service) putPath(ctx context.Context, did, parent weibo.DeptID, path []weibo.DeptID) error {
	_, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Departments, Row: tables.DeptKey(did),
		Values: hbase.Values{tables.FamInfo: {tables.ColPath: tables.EncodePath(path)}}},
		tables.FamInfo, tables.ColParent, tables.EncodeID(parent))
	return err
}
