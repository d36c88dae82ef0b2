package scim

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/elimity-com/scim"
	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/tables"
)

// users is the /Users resource handler.
type users struct{ h *handler }

// patchRetries bounds the read-apply-write rounds of a PATCH without
// If-Match when another change lands between its read and its write: a
// round is lost only to another change that was written, so a PATCH
// among up to patchRetries others at once is always applied; beyond, it
// may answer 412.
const patchRetries = 16

func (u *users) Create(r *http.Request, attrs scim.ResourceAttributes) (scim.Resource, error) {
	ctx := r.Context()
	in, err := userInput(attrs)
	if err != nil {
		return scim.Resource{}, err
	}
	usr, err := u.h.prov.CreateUser(ctx, clientOf(ctx), in)
	if err != nil {
		return scim.Resource{}, scimError(ctx, u.h.log, err)
	}
	return userResource(usr), nil
}

func (u *users) Get(r *http.Request, id string) (scim.Resource, error) {
	ctx := r.Context()
	uid, err := weibo.ParseUserID(id)
	if err != nil {
		return scim.Resource{}, notFound("User", id)
	}
	usr, err := u.h.prov.GetUser(ctx, uid)
	if err != nil {
		return scim.Resource{}, scimError(ctx, u.h.log, err)
	}
	return userResource(usr), nil
}

func (u *users) GetAll(r *http.Request, params scim.ListRequestParams) (scim.Page, error) {
	ctx := r.Context()
	list, err := u.h.filterUsers(ctx, params.FilterValidator)
	if err != nil {
		return scim.Page{}, scimError(ctx, u.h.log, err)
	}
	page := scim.Page{TotalResults: len(list), Resources: []scim.Resource{}}
	for _, usr := range window(list, params.StartIndex, params.Count) {
		page.Resources = append(page.Resources, userResource(usr))
	}
	return page, nil
}

// Search serves POST /Users/.search (RFC 7644 §3.4.3) as GET /Users.
func (u *users) Search(r *http.Request, params scim.SearchParams) (scim.Page, error) {
	return u.GetAll(r, scim.ListRequestParams{Count: params.Count, StartIndex: params.StartIndex, FilterValidator: params.FilterValidator})
}

func (u *users) Replace(r *http.Request, id string, attrs scim.ResourceAttributes) (scim.Resource, error) {
	ctx := r.Context()
	uid, err := weibo.ParseUserID(id)
	if err != nil {
		return scim.Resource{}, notFound("User", id)
	}
	ifv, err := ifVersion(r)
	if err != nil {
		return scim.Resource{}, err
	}
	in, err := userInput(attrs)
	if err != nil {
		return scim.Resource{}, err
	}
	usr, err := u.h.prov.ReplaceUser(ctx, clientOf(ctx), uid, in, ifv)
	if err != nil {
		return scim.Resource{}, scimError(ctx, u.h.log, err)
	}
	return userResource(usr), nil
}

func (u *users) Delete(r *http.Request, id string) error {
	ctx := r.Context()
	uid, err := weibo.ParseUserID(id)
	if err != nil {
		return notFound("User", id)
	}
	ifv, err := ifVersion(r)
	if err != nil {
		return err
	}
	if err := u.h.prov.DeleteUser(ctx, clientOf(ctx), uid, ifv); err != nil {
		return scimError(ctx, u.h.log, err)
	}
	return nil
}

// Patch reads the user, applies the operations to its attributes and
// replaces it with the version it read (If-Match's when given): a change
// landing in between makes it start over (without If-Match) or answers
// 412 (with).
func (u *users) Patch(r *http.Request, id string, ops []scim.PatchOperation) (scim.Resource, error) {
	ctx := r.Context()
	uid, err := weibo.ParseUserID(id)
	if err != nil {
		return scim.Resource{}, notFound("User", id)
	}
	ifv, err := ifVersion(r)
	if err != nil {
		return scim.Resource{}, err
	}
	p := patcher{main: u.h.userType.Schema, exts: []schema.Schema{enterpriseSchema()}}
	for attempt := 0; ; attempt++ {
		usr, err := u.h.prov.GetUser(ctx, uid)
		if err != nil {
			return scim.Resource{}, scimError(ctx, u.h.log, err)
		}
		if ifv != nil && *ifv != usr.Version {
			return scim.Resource{}, scimError(ctx, u.h.log, &weibo.Error{Code: weibo.CodeBadUserInput, Reason: weibo.ReasonVersionMismatch,
				Message: fmt.Sprintf("The user is at version %d, not %d.", usr.Version, *ifv)})
		}
		attrs := userAttrs(usr)
		if usr.ExternalID != "" {
			attrs["externalId"] = usr.ExternalID
		}
		before, beforeErr := userInput(attrs)
		if err := p.applyAll(attrs, ops); err != nil {
			return scim.Resource{}, err
		}
		in, err := userInput(attrs)
		if err != nil {
			return scim.Resource{}, err
		}
		if beforeErr == nil && reflect.DeepEqual(before, in) {
			// Nothing changes (identity providers resend what they
			// have, or only attributes the gateway does not keep): no
			// write, no new version.
			return userResource(usr), nil
		}
		v := usr.Version
		next, err := u.h.prov.ReplaceUser(ctx, clientOf(ctx), uid, in, &v)
		if err != nil {
			if e, ok := errors.AsType[*weibo.Error](err); ok && e.Reason == weibo.ReasonVersionMismatch && ifv == nil && attempt < patchRetries {
				continue
			}
			return scim.Resource{}, scimError(ctx, u.h.log, err)
		}
		return userResource(next), nil
	}
}

// userResource is usr as the library answers it.
func userResource(usr *provision.User) scim.Resource {
	res := scim.Resource{
		ID:         strconv.FormatUint(uint64(usr.ID), 10),
		Attributes: userAttrs(usr),
		Meta:       scim.Meta{Created: timePtr(usr.Created), LastModified: timePtr(usr.Modified), Version: etag(usr.Version)},
	}
	if usr.ExternalID != "" {
		res.ExternalID = optional.NewString(usr.ExternalID)
	}
	return res
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// userAttrs is usr's attributes (no id, externalId, meta) with canonical
// names, the enterprise extension's under its URI.
func userAttrs(usr *provision.User) map[string]any {
	a := usr.Attrs
	m := map[string]any{"userName": usr.UserName, "active": usr.Active}
	setStr(m, "displayName", usr.DisplayName)
	setStr(m, "title", a.Title)
	setStr(m, "locale", a.Locale)
	setStr(m, "preferredLanguage", a.PreferredLanguage)
	if n := a.Name; n != nil {
		nm := map[string]any{}
		setStr(nm, "formatted", n.Formatted)
		setStr(nm, "familyName", n.FamilyName)
		setStr(nm, "givenName", n.GivenName)
		setStr(nm, "middleName", n.MiddleName)
		setStr(nm, "honorificPrefix", n.HonorificPrefix)
		setStr(nm, "honorificSuffix", n.HonorificSuffix)
		if len(nm) > 0 {
			m["name"] = nm
		}
	}
	if len(a.Emails) > 0 {
		var list []any
		for _, e := range a.Emails {
			em := map[string]any{"value": e.Value}
			setStr(em, "type", e.Type)
			setStr(em, "display", e.Display)
			if e.Primary {
				em["primary"] = true
			}
			list = append(list, em)
		}
		m["emails"] = list
	}
	if len(usr.Groups) > 0 {
		var list []any
		for _, g := range usr.Groups {
			list = append(list, map[string]any{"value": g.ID, "display": g.Display, "type": "direct", "$ref": Prefix + "/Groups/" + g.ID})
		}
		m["groups"] = list
	}
	ext := map[string]any{}
	setStr(ext, "employeeNumber", a.EmployeeNumber)
	setStr(ext, "costCenter", a.CostCenter)
	setStr(ext, "organization", a.Organization)
	setStr(ext, "division", a.Division)
	setStr(ext, "department", a.Department)
	if a.Manager != 0 {
		id := strconv.FormatUint(a.Manager, 10)
		ext["manager"] = map[string]any{"value": id, "$ref": Prefix + "/Users/" + id}
	}
	if len(ext) > 0 {
		m[EnterpriseSchema] = ext
	}
	return m
}

func setStr(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// userInput reads a user's attributes (validated by the library, or
// patched) into the domain's input. Absent active is true.
func userInput(attrs map[string]any) (provision.UserInput, error) {
	in := provision.UserInput{Active: true}
	in.UserName, _ = attrs["userName"].(string)
	if in.UserName == "" {
		return in, invalidValue("userName is required.")
	}
	in.ExternalID, _ = attrs["externalId"].(string)
	in.DisplayName, _ = attrs["displayName"].(string)
	in.Password, _ = attrs["password"].(string)
	if v, ok := attrs["active"]; ok {
		b, ok := v.(bool)
		if !ok {
			return in, invalidValue("active must be a boolean.")
		}
		in.Active = b
	}
	a := &in.Attrs
	a.Title, _ = attrs["title"].(string)
	a.Locale, _ = attrs["locale"].(string)
	a.PreferredLanguage, _ = attrs["preferredLanguage"].(string)
	if n, ok := attrs["name"].(map[string]any); ok {
		sn := tables.ScimName{}
		sn.Formatted, _ = n["formatted"].(string)
		sn.FamilyName, _ = n["familyName"].(string)
		sn.GivenName, _ = n["givenName"].(string)
		sn.MiddleName, _ = n["middleName"].(string)
		sn.HonorificPrefix, _ = n["honorificPrefix"].(string)
		sn.HonorificSuffix, _ = n["honorificSuffix"].(string)
		if sn != (tables.ScimName{}) {
			a.Name = &sn
		}
	}
	for _, e := range elements(attrs["emails"]) {
		em := tables.ScimEmail{}
		em.Value, _ = e["value"].(string)
		em.Type, _ = e["type"].(string)
		em.Display, _ = e["display"].(string)
		em.Primary, _ = e["primary"].(bool)
		if em.Value == "" {
			return in, invalidValue("An email needs a value.")
		}
		a.Emails = append(a.Emails, em)
	}
	if ext, ok := attrs[EnterpriseSchema].(map[string]any); ok {
		a.EmployeeNumber, _ = ext["employeeNumber"].(string)
		a.CostCenter, _ = ext["costCenter"].(string)
		a.Organization, _ = ext["organization"].(string)
		a.Division, _ = ext["division"].(string)
		a.Department, _ = ext["department"].(string)
		if mg, ok := ext["manager"].(map[string]any); ok {
			if v, _ := mg["value"].(string); v != "" {
				id, err := weibo.ParseUserID(v)
				if err != nil {
					return in, invalidValue("manager.value " + weibo.Excerpt(v) + " is not a user id.")
				}
				a.Manager = uint64(id)
			}
		}
	}
	return in, nil
}

// filterMap is usr as a filter evaluates it: its attributes with id,
// externalId and meta, the enterprise extension's also under
// "<URI>:<name>".
func filterMap(usr *provision.User) map[string]any {
	m := userAttrs(usr)
	m["id"] = strconv.FormatUint(uint64(usr.ID), 10)
	if usr.ExternalID != "" {
		m["externalId"] = usr.ExternalID
	}
	m["meta"] = metaMap(usr.Created, usr.Modified, usr.Version)
	if ext, ok := m[EnterpriseSchema].(map[string]any); ok {
		for k, v := range maps.All(ext) {
			m[EnterpriseSchema+":"+k] = v
		}
	}
	return m
}

func metaMap(created, modified time.Time, version int64) map[string]any {
	m := map[string]any{"version": etag(version)}
	if !created.IsZero() {
		m["created"] = created.UTC().Format(time.RFC3339Nano)
	}
	if !modified.IsZero() {
		m["lastModified"] = modified.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// window is the page of list from 1-based start, count long.
func window[T any](list []T, start, count int) []T {
	if start < 1 {
		start = 1
	}
	if start > len(list) {
		return nil
	}
	list = list[start-1:]
	if count < len(list) {
		list = list[:max(count, 0)]
	}
	return list
}
