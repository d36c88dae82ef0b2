package domaintest

import (
	"context"
	"fmt"
	"math"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/domain"
)

// AuditActions returns the actions of the audit events listed for target,
// newest first (every page), after checking that no event of target is
// left pending: an error names a pending one, with its action.
func AuditActions(ctx context.Context, d *domain.Domain, target weibo.NodeID) ([]string, error) {
	pending, err := d.Org.Audit.Log().PendingEvents(ctx, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		if p.Entry.Target == target {
			return nil, fmt.Errorf("audit event %s (%s of %s) left pending", p.Entry.ID, p.Entry.Action, target)
		}
	}
	var actions []string
	var after *string
	for {
		page, err := d.Org.Audit.Page(ctx, audit.Filter{Target: &target}, new(weibo.MaxPageSize), after)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Edges {
			actions = append(actions, e.Event.Action)
		}
		if !page.PageInfo.HasNextPage {
			return actions, nil
		}
		after = page.PageInfo.EndCursor
	}
}
