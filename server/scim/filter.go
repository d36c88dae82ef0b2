package scim

import (
	"context"
	"strings"

	scimerr "github.com/elimity-com/scim/errors"
	scimfilter "github.com/elimity-com/scim/filter"
	"github.com/elimity-com/scim/schema"
	"github.com/scim2/filter-parser/v2"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/provision"
)

// scanBatch is how many managed users a filtered list reads at once.
const scanBatch = 500

// evaluator tests resources (as filter maps) against a filter.
type evaluator struct {
	v  scimfilter.Validator
	on bool // false: every resource passes
}

// newEvaluator returns the evaluator of expr (nil: none) over main and
// exts. The library compares a sub-attribute of a multi-valued attribute
// (emails.value eq "x") only inside a value path, so such expressions are
// rewritten to one (emails[value eq "x"]).
func newEvaluator(expr filter.Expression, main schema.Schema, exts ...schema.Schema) evaluator {
	if expr == nil {
		return evaluator{}
	}
	withCommon := main
	withCommon.Attributes = append(append(schema.Attributes{}, main.Attributes...), schema.CommonAttributes()...)
	all := append([]schema.Schema{withCommon}, exts...)
	return evaluator{v: scimfilter.NewFilterValidator(rewrite(expr, all), withCommon, exts...), on: true}
}

// passes reports whether m passes the filter.
func (e evaluator) passes(m map[string]any) bool {
	if !e.on {
		return true
	}
	return passes(e.v, m)
}

// rewrite returns expr with each comparison of a multi-valued attribute's
// sub-attribute turned into a value path.
func rewrite(expr filter.Expression, schemas []schema.Schema) filter.Expression {
	switch e := expr.(type) {
	case *filter.AttributeExpression:
		sub := e.AttributePath.SubAttributeName()
		if sub == "" {
			return e
		}
		for _, s := range schemas {
			if uri := e.AttributePath.URI(); uri != "" && !strings.EqualFold(uri, s.ID) {
				continue
			}
			if a, ok := s.Attributes.ContainsAttribute(e.AttributePath.AttributeName); ok && a.MultiValued() {
				inner := &filter.AttributeExpression{AttributePath: filter.AttributePath{AttributeName: sub}, Operator: e.Operator, CompareValue: e.CompareValue}
				return &filter.ValuePath{AttributePath: filter.AttributePath{URIPrefix: e.AttributePath.URIPrefix, AttributeName: e.AttributePath.AttributeName}, ValueFilter: inner}
			}
		}
		return e
	case *filter.LogicalExpression:
		return &filter.LogicalExpression{Left: rewrite(e.Left, schemas), Right: rewrite(e.Right, schemas), Operator: e.Operator}
	case *filter.NotExpression:
		return &filter.NotExpression{Expression: rewrite(e.Expression, schemas)}
	}
	return expr
}

// equality returns the string an eq on attribute name (any case, of the
// core schema) compares with, in expr or in one side of an and.
func equality(expr filter.Expression, name string) (string, bool) {
	switch e := expr.(type) {
	case *filter.AttributeExpression:
		if e.Operator != filter.EQ || e.AttributePath.SubAttributeName() != "" || !strings.EqualFold(e.AttributePath.AttributeName, name) {
			return "", false
		}
		if uri := e.AttributePath.URI(); uri != "" && uri != UserSchema && uri != GroupSchema {
			return "", false
		}
		s, ok := e.CompareValue.(string)
		return s, ok
	case *filter.LogicalExpression:
		if e.Operator != filter.AND {
			return "", false
		}
		if s, ok := equality(e.Left, name); ok {
			return s, true
		}
		return equality(e.Right, name)
	}
	return "", false
}

// filterUsers returns the users passing v (nil: every managed user), in
// id order. userName eq (any user, managed or not) and externalId eq (the
// index) read only their candidates; otherwise the managed users are
// evaluated, at most provision.MaxScan of them (beyond: 400 tooMany).
func (h *handler) filterUsers(ctx context.Context, v *scimfilter.Validator) ([]*provision.User, error) {
	var expr filter.Expression
	if v != nil {
		expr = v.GetFilter()
	}
	ev := newEvaluator(expr, h.userType.Schema, enterpriseSchema())
	keep := func(list []*provision.User) []*provision.User {
		var out []*provision.User
		for _, u := range list {
			if u != nil && ev.passes(filterMap(u)) {
				out = append(out, u)
			}
		}
		return out
	}
	if name, ok := equality(expr, "userName"); ok {
		u, err := h.prov.UserByName(ctx, name)
		if err != nil {
			return nil, err
		}
		return keep([]*provision.User{u}), nil
	}
	if ext, ok := equality(expr, "externalId"); ok {
		list, err := h.prov.UsersByExternalID(ctx, ext)
		if err != nil {
			return nil, err
		}
		return keep(list), nil
	}
	var out []*provision.User
	var after weibo.UserID
	scanned := 0
	for {
		batch, err := h.prov.ListUsers(ctx, after, scanBatch)
		if err != nil {
			return nil, err
		}
		scanned += len(batch)
		if scanned > provision.MaxScan {
			return nil, scimerr.ScimErrorTooMany
		}
		out = append(out, keep(batch)...)
		if len(batch) < scanBatch {
			return out, nil
		}
		after = batch[len(batch)-1].ID
	}
}

// filterGroups returns the groups passing v (nil: every group):
// externalId eq reads the index, anything else every department and
// role. Members are read when the filter names them.
func (h *handler) filterGroups(ctx context.Context, v *scimfilter.Validator) ([]*provision.Group, error) {
	var expr filter.Expression
	withMembers := false
	if v != nil {
		expr = v.GetFilter()
		withMembers = mentions(expr, "members")
	}
	ev := newEvaluator(expr, h.groupType.Schema, gatewayGroupSchema())
	var list []*provision.Group
	var err error
	if ext, ok := equality(expr, "externalId"); ok && !withMembers {
		list, err = h.prov.GroupsByExternalID(ctx, ext)
	} else {
		list, err = h.prov.ListGroups(ctx, withMembers)
	}
	if err != nil {
		return nil, err
	}
	var out []*provision.Group
	for _, g := range list {
		if ev.passes(groupFilterMap(g)) {
			out = append(out, g)
		}
	}
	return out, nil
}

// mentions reports whether expr compares attribute name.
func mentions(expr filter.Expression, name string) bool {
	switch e := expr.(type) {
	case *filter.AttributeExpression:
		return strings.EqualFold(e.AttributePath.AttributeName, name)
	case *filter.ValuePath:
		return strings.EqualFold(e.AttributePath.AttributeName, name)
	case *filter.LogicalExpression:
		return mentions(e.Left, name) || mentions(e.Right, name)
	case *filter.NotExpression:
		return mentions(e.Expression, name)
	}
	return false
}
