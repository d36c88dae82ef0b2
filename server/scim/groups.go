package scim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/elimity-com/scim"
	scimerr "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"
	"github.com/scim2/filter-parser/v2"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/provision"
)

// groups is the /Groups resource handler: departments and roles.
type groups struct{ h *handler }

// withMembers reports whether r wants a group's members: not when
// excludedAttributes names them (as Entra ID and Okta ask).
func withMembers(r *http.Request) bool {
	for _, a := range strings.Split(r.URL.Query().Get("excludedAttributes"), ",") {
		if strings.EqualFold(strings.TrimSpace(a), "members") {
			return false
		}
	}
	return true
}

func (g *groups) Create(r *http.Request, attrs scim.ResourceAttributes) (scim.Resource, error) {
	ctx := r.Context()
	in, err := groupInput(attrs)
	if err != nil {
		return scim.Resource{}, err
	}
	grp, err := g.h.prov.CreateGroup(ctx, clientOf(ctx), in)
	if err != nil {
		return scim.Resource{}, scimError(ctx, g.h.log, err)
	}
	return groupResource(grp, true), nil
}

func (g *groups) Get(r *http.Request, id string) (scim.Resource, error) {
	ctx := r.Context()
	with := withMembers(r)
	grp, err := g.h.prov.GetGroup(ctx, id, with)
	if err != nil {
		return scim.Resource{}, scimError(ctx, g.h.log, err)
	}
	return groupResource(grp, with), nil
}

func (g *groups) GetAll(r *http.Request, params scim.ListRequestParams) (scim.Page, error) {
	ctx := r.Context()
	list, err := g.h.filterGroups(ctx, params.FilterValidator)
	if err != nil {
		return scim.Page{}, scimError(ctx, g.h.log, err)
	}
	page := scim.Page{TotalResults: len(list), Resources: []scim.Resource{}}
	with := withMembers(r)
	for _, grp := range window(list, params.StartIndex, params.Count) {
		if with && grp.Members == nil {
			// Members are read for the page only.
			if grp, err = g.h.prov.GetGroup(ctx, grp.ID, true); err != nil {
				if weibo.CodeOf(err) == weibo.CodeNotFound {
					continue // deleted since the list
				}
				return scim.Page{}, scimError(ctx, g.h.log, err)
			}
		}
		page.Resources = append(page.Resources, groupResource(grp, with))
	}
	return page, nil
}

// Search serves POST /Groups/.search (RFC 7644 §3.4.3) as GET /Groups.
func (g *groups) Search(r *http.Request, params scim.SearchParams) (scim.Page, error) {
	return g.GetAll(r, scim.ListRequestParams{Count: params.Count, StartIndex: params.StartIndex, FilterValidator: params.FilterValidator})
}

func (g *groups) Replace(r *http.Request, id string, attrs scim.ResourceAttributes) (scim.Resource, error) {
	ctx := r.Context()
	ifv, err := ifVersion(r)
	if err != nil {
		return scim.Resource{}, err
	}
	in, err := groupInput(attrs)
	if err != nil {
		return scim.Resource{}, err
	}
	grp, err := g.h.prov.ReplaceGroup(ctx, clientOf(ctx), id, in, ifv)
	if err != nil {
		return scim.Resource{}, scimError(ctx, g.h.log, err)
	}
	return groupResource(grp, true), nil
}

func (g *groups) Delete(r *http.Request, id string) error {
	ctx := r.Context()
	ifv, err := ifVersion(r)
	if err != nil {
		return err
	}
	if err := g.h.prov.DeleteGroup(ctx, clientOf(ctx), id, ifv); err != nil {
		return scimError(ctx, g.h.log, err)
	}
	return nil
}

// Patch turns the operations into one provision.GroupChange: member
// operations into the members to add and remove (or all), the others
// applied to the group's attributes and compared. It answers 204 with
// the new ETag (a group's members may be many).
func (g *groups) Patch(r *http.Request, id string, ops []scim.PatchOperation) (scim.Resource, error) {
	ctx := r.Context()
	ifv, err := ifVersion(r)
	if err != nil {
		return scim.Resource{}, err
	}
	grp, err := g.h.prov.GetGroup(ctx, id, false)
	if err != nil {
		return scim.Resource{}, scimError(ctx, g.h.log, err)
	}
	ch, err := groupChange(g.h.groupType.Schema, grp, ops)
	if err != nil {
		return scim.Resource{}, err
	}
	if ch.DisplayName == nil && ch.ExternalID == nil && ch.Parent == nil && ch.Priority == nil &&
		len(ch.Add) == 0 && len(ch.Remove) == 0 && !ch.RemoveAll {
		// Nothing to change: no write.
		if ifv != nil && *ifv != grp.Version {
			return scim.Resource{}, scimError(ctx, g.h.log, &weibo.Error{Code: weibo.CodeBadUserInput, Reason: weibo.ReasonVersionMismatch,
				Message: "The group is at version " + strconv.FormatInt(grp.Version, 10) + ", not " + strconv.FormatInt(*ifv, 10) + "."})
		}
		setHeader(ctx, "ETag", etag(grp.Version))
		return scim.Resource{}, nil
	}
	next, err := g.h.prov.PatchGroup(ctx, clientOf(ctx), id, ch, ifv)
	if err != nil {
		return scim.Resource{}, scimError(ctx, g.h.log, err)
	}
	setHeader(ctx, "ETag", etag(next.Version))
	return scim.Resource{}, nil
}

// memberSet collects a PATCH's member operations in order.
type memberSet struct {
	all         bool
	add, remove []weibo.UserID
}

func (s *memberSet) put(uid weibo.UserID, add bool) {
	drop := func(l []weibo.UserID) []weibo.UserID {
		out := l[:0]
		for _, x := range l {
			if x != uid {
				out = append(out, x)
			}
		}
		return out
	}
	s.add, s.remove = drop(s.add), drop(s.remove)
	if add {
		s.add = append(s.add, uid)
	} else if !s.all {
		s.remove = append(s.remove, uid)
	}
}

func (s *memberSet) clear() { *s = memberSet{all: true} }

// memberIDs reads the user ids of member values ([{"value": "12"}]).
func memberIDs(v any) ([]weibo.UserID, error) {
	var out []weibo.UserID
	for _, e := range elements(v) {
		s, _ := e["value"].(string)
		uid, err := weibo.ParseUserID(s)
		if err != nil {
			return nil, invalidValue("Member " + weibo.Excerpt(s) + " is not a user id.")
		}
		out = append(out, uid)
	}
	return out, nil
}

// valueEqualities reads the ids of a member filter: value eq "12", or
// several joined by or.
func valueEqualities(e filter.Expression) ([]weibo.UserID, bool) {
	switch e := e.(type) {
	case *filter.AttributeExpression:
		s, ok := e.CompareValue.(string)
		if e.Operator != filter.EQ || !ok || !strings.EqualFold(e.AttributePath.AttributeName, "value") {
			return nil, false
		}
		uid, err := weibo.ParseUserID(s)
		if err != nil {
			return nil, true // no such member: removes nothing
		}
		return []weibo.UserID{uid}, true
	case *filter.LogicalExpression:
		if e.Operator != filter.OR {
			return nil, false
		}
		l, ok1 := valueEqualities(e.Left)
		r, ok2 := valueEqualities(e.Right)
		return append(l, r...), ok1 && ok2
	}
	return nil, false
}

// groupChange turns ops on grp into a change.
func groupChange(main schema.Schema, grp *provision.Group, ops []scim.PatchOperation) (provision.GroupChange, error) {
	var ms memberSet
	attrs := groupAttrs(grp, false)
	if grp.ExternalID != "" {
		attrs["externalId"] = grp.ExternalID
	}
	p := patcher{main: main, exts: []schema.Schema{gatewayGroupSchema()}}
	members := func(op string, v any) error {
		ids, err := memberIDs(v)
		if err != nil {
			return err
		}
		switch op {
		case scim.PatchOperationReplace:
			ms.clear()
			fallthrough
		case scim.PatchOperationAdd:
			for _, id := range ids {
				ms.put(id, true)
			}
		case scim.PatchOperationRemove:
			if v == nil {
				ms.clear()
			}
			for _, id := range ids {
				ms.put(id, false)
			}
		}
		return nil
	}
	for _, op := range ops {
		name := strings.ToLower(op.Op)
		switch {
		case op.Path != nil && strings.EqualFold(op.Path.AttributePath.AttributeName, "members"):
			switch {
			case op.Path.ValueExpression == nil && op.Path.AttributePath.SubAttributeName() == "":
				if err := members(name, op.Value); err != nil {
					return provision.GroupChange{}, err
				}
			case name == scim.PatchOperationRemove && op.Path.SubAttributeName() == "":
				ids, ok := valueEqualities(op.Path.ValueExpression)
				if !ok {
					return provision.GroupChange{}, scimerr.ScimErrorInvalidFilter
				}
				for _, id := range ids {
					ms.put(id, false)
				}
			default:
				return provision.GroupChange{}, mutability("A member's attributes are immutable: add or remove the member.")
			}
		case op.Path == nil:
			m, _ := op.Value.(map[string]any)
			rest := map[string]any{}
			for k, v := range m {
				if strings.EqualFold(k, "members") {
					if err := members(name, v); err != nil {
						return provision.GroupChange{}, err
					}
					continue
				}
				rest[k] = v
			}
			if err := p.apply(attrs, scim.PatchOperation{Op: name, Value: rest}); err != nil {
				return provision.GroupChange{}, err
			}
		default:
			if err := p.apply(attrs, op); err != nil {
				return provision.GroupChange{}, err
			}
		}
	}
	if k, given := kindOf(attrs); given && k != grp.Kind {
		return provision.GroupChange{}, mutability("A group's kind is immutable: it is " + string(grp.Kind) + ".")
	}
	in, err := groupInput(attrs)
	if err != nil {
		return provision.GroupChange{}, err
	}
	ch := provision.GroupChange{Add: ms.add, Remove: ms.remove, RemoveAll: ms.all}
	if in.DisplayName != grp.DisplayName {
		ch.DisplayName = &in.DisplayName
	}
	if in.ExternalID != grp.ExternalID {
		ch.ExternalID = &in.ExternalID
	}
	if in.Parent != grp.Parent {
		ch.Parent = &in.Parent
	}
	if grp.Kind == provision.KindRole && in.Priority != grp.Priority {
		ch.Priority = &in.Priority
	}
	return ch, nil
}

// groupResource is grp as the library answers it; its members only when
// read (with).
func groupResource(grp *provision.Group, with bool) scim.Resource {
	res := scim.Resource{
		ID:         grp.ID,
		Attributes: groupAttrs(grp, with),
		Meta:       scim.Meta{Created: timePtr(grp.Created), LastModified: timePtr(grp.Modified), Version: etag(grp.Version)},
	}
	if grp.ExternalID != "" {
		res.ExternalID = optional.NewString(grp.ExternalID)
	}
	return res
}

// groupAttrs is grp's attributes (no id, externalId, meta), the gateway
// extension's under its URI.
func groupAttrs(grp *provision.Group, with bool) map[string]any {
	m := map[string]any{"displayName": grp.DisplayName}
	if with {
		list := []any{}
		for _, mb := range grp.Members {
			id := strconv.FormatUint(uint64(mb.ID), 10)
			list = append(list, map[string]any{"value": id, "display": mb.Display, "type": "User", "$ref": Prefix + "/Users/" + id})
		}
		m["members"] = list
	}
	ext := map[string]any{"kind": string(grp.Kind)}
	if grp.Parent != "" {
		ext["parent"] = grp.Parent
	}
	if grp.Kind == provision.KindRole {
		ext["priority"] = int64(grp.Priority)
	}
	m[GatewayGroupSchema] = ext
	return m
}

// groupFilterMap is grp as a filter evaluates it.
func groupFilterMap(grp *provision.Group) map[string]any {
	m := groupAttrs(grp, grp.Members != nil)
	m["id"] = grp.ID
	if grp.ExternalID != "" {
		m["externalId"] = grp.ExternalID
	}
	m["meta"] = metaMap(grp.Created, grp.Modified, grp.Version)
	for k, v := range m[GatewayGroupSchema].(map[string]any) {
		m[GatewayGroupSchema+":"+k] = v
	}
	return m
}

// kindOf returns the kind attrs give, and whether they give one.
func kindOf(attrs map[string]any) (provision.GroupKind, bool) {
	ext, _ := attrs[GatewayGroupSchema].(map[string]any)
	k, ok := ext["kind"].(string)
	if !ok || k == "" {
		return provision.KindDepartment, false
	}
	return provision.GroupKind(strings.ToLower(k)), true
}

// groupInput reads a group's attributes (validated by the library, or
// patched) into the domain's input.
func groupInput(attrs map[string]any) (provision.GroupInput, error) {
	var in provision.GroupInput
	in.Kind, _ = kindOf(attrs)
	if in.Kind != provision.KindDepartment && in.Kind != provision.KindRole {
		return in, invalidValue("kind " + weibo.Excerpt(string(in.Kind)) + " is neither department nor role.")
	}
	in.DisplayName, _ = attrs["displayName"].(string)
	if in.DisplayName == "" {
		return in, invalidValue("displayName is required.")
	}
	in.ExternalID, _ = attrs["externalId"].(string)
	ext, _ := attrs[GatewayGroupSchema].(map[string]any)
	in.Parent, _ = ext["parent"].(string)
	switch p := ext["priority"].(type) {
	case nil:
		if in.Kind == provision.KindRole {
			in.Priority = 1
		}
	case int64:
		in.Priority = int(p)
	case int:
		in.Priority = p
	case float64:
		in.Priority = int(p)
	case json.Number:
		n, err := p.Int64()
		if err != nil {
			return in, invalidValue("priority must be an integer.")
		}
		in.Priority = int(n)
	default:
		return in, invalidValue("priority must be an integer.")
	}
	if in.Kind == provision.KindDepartment && ext["priority"] != nil {
		return in, invalidValue("priority is a role's: a department has none.")
	}
	if in.Kind == provision.KindRole && in.Parent != "" {
		return in, invalidValue("parent is a department's: a role has none.")
	}
	if in.Kind == provision.KindRole && (in.Priority < 1 || in.Priority > 1000) {
		return in, invalidValue("priority must be 1–1000.")
	}
	ids, err := memberIDs(attrs["members"])
	if err != nil {
		return in, err
	}
	in.Members = ids
	return in, nil
}
