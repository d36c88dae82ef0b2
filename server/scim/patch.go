package scim

import (
	"fmt"
	"strings"

	"github.com/elimity-com/scim"
	scimerr "github.com/elimity-com/scim/errors"
	scimfilter "github.com/elimity-com/scim/filter"
	"github.com/elimity-com/scim/schema"
	"github.com/scim2/filter-parser/v2"
)

// patcher applies PATCH operations (RFC 7644 §3.5.2) to a resource's
// attributes as a map: the resource's JSON with canonical attribute names,
// an extension's attributes under its schema URI, multi-valued attributes
// as []any of map[string]any. The operations come validated by the
// library (op lower-cased, path parsed, values typed by the schema).
type patcher struct {
	main schema.Schema
	exts []schema.Schema
}

// externalIDAttr is the common attribute externalId a client writes.
var externalIDAttr = schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{Name: "externalId", CaseExact: true}))

// applyAll applies ops to attrs in order; the first failing op's error
// (a 400 SCIM error) is returned, attrs then half-changed (callers apply
// to a copy).
func (p patcher) applyAll(attrs map[string]any, ops []scim.PatchOperation) error {
	for _, op := range ops {
		if err := p.apply(attrs, op); err != nil {
			return err
		}
	}
	return nil
}

// apply applies one operation to attrs.
func (p patcher) apply(attrs map[string]any, op scim.PatchOperation) error {
	opName := strings.ToLower(op.Op)
	switch opName {
	case scim.PatchOperationAdd, scim.PatchOperationReplace, scim.PatchOperationRemove:
	default:
		return invalidValue(fmt.Sprintf("PATCH op %q is none of add, replace, remove.", op.Op))
	}
	if op.Path == nil {
		if opName == scim.PatchOperationRemove {
			return scimerr.ScimErrorNoTarget
		}
		m, ok := op.Value.(map[string]any)
		if !ok {
			return invalidValue("A PATCH op without a path needs an object of attributes as its value.")
		}
		for k, v := range m {
			if ext, ok := p.extension(k); ok {
				sub, ok := v.(map[string]any)
				if !ok {
					return invalidValue("The value of " + k + " must be an object.")
				}
				for sk, sv := range sub {
					path, err := filter.ParsePath([]byte(sk))
					if err != nil {
						return scimerr.ScimErrorInvalidPath
					}
					uri := ext.ID
					path.AttributePath.URIPrefix = &uri
					if err := p.applyPath(attrs, opName, path, sv); err != nil {
						return err
					}
				}
				continue
			}
			path, err := filter.ParsePath([]byte(k))
			if err != nil {
				return scimerr.ScimErrorInvalidPath
			}
			if err := p.applyPath(attrs, opName, path, v); err != nil {
				return err
			}
		}
		return nil
	}
	return p.applyPath(attrs, opName, *op.Path, op.Value)
}

// extension returns the extension schema whose URI is name (any case).
func (p patcher) extension(name string) (schema.Schema, bool) {
	for _, e := range p.exts {
		if strings.EqualFold(e.ID, name) {
			return e, true
		}
	}
	return schema.Schema{}, false
}

// resolve returns the map holding path's attribute (attrs, or the
// extension's map in attrs, created when create is set; nil when absent)
// and the attribute.
func (p patcher) resolve(attrs map[string]any, ap filter.AttributePath, create bool) (map[string]any, schema.CoreAttribute, error) {
	s := p.main
	container := attrs
	if uri := ap.URI(); uri != "" && !strings.EqualFold(uri, p.main.ID) {
		ext, ok := p.extension(uri)
		if !ok {
			return nil, schema.CoreAttribute{}, scimerr.ScimErrorInvalidPath
		}
		s = ext
		m, _ := attrs[ext.ID].(map[string]any)
		if m == nil && create {
			m = map[string]any{}
			attrs[ext.ID] = m
		}
		container = m
	}
	attr, ok := s.Attributes.ContainsAttribute(ap.AttributeName)
	if !ok && s.ID == p.main.ID && strings.EqualFold(ap.AttributeName, "externalId") {
		attr, ok = externalIDAttr, true
	}
	if !ok {
		return nil, schema.CoreAttribute{}, scimerr.ScimErrorInvalidPath
	}
	if attr.Mutability() == "readOnly" {
		return nil, schema.CoreAttribute{}, mutability("Attribute " + attr.Name() + " is read-only.")
	}
	return container, attr, nil
}

// applyPath applies op (lower case) with value at path.
func (p patcher) applyPath(attrs map[string]any, op string, path filter.Path, value any) error {
	container, attr, err := p.resolve(attrs, path.AttributePath, op != scim.PatchOperationRemove)
	if err != nil {
		return err
	}
	if container == nil { // removing from an absent extension
		return nil
	}
	name := attr.Name()
	sub := path.AttributePath.SubAttributeName()
	if path.ValueExpression == nil && sub == "" {
		return setWhole(container, attr, op, value)
	}
	if path.ValueExpression == nil {
		// name.sub: of a complex attribute, or of each value of a
		// multi-valued one.
		subAttr, ok := attr.SubAttributes().ContainsAttribute(sub)
		if !ok {
			return scimerr.ScimErrorInvalidPath
		}
		if !attr.MultiValued() {
			m, _ := container[name].(map[string]any)
			if m == nil {
				if op == scim.PatchOperationRemove {
					return nil
				}
				m = map[string]any{}
				container[name] = m
			}
			setSub(m, subAttr.Name(), op, value)
			if len(m) == 0 {
				delete(container, name)
			}
			return nil
		}
		for _, e := range elements(container[name]) {
			setSub(e, subAttr.Name(), op, value)
		}
		return nil
	}
	if !attr.MultiValued() {
		return scimerr.ScimErrorInvalidPath
	}
	v := scimfilter.NewFilterValidator(path.ValueExpression, schema.Schema{ID: p.main.ID, Attributes: scimfilter.MultiValuedFilterAttributes(attr)})
	all := elements(container[name])
	var kept []any
	matched := 0
	sub = path.SubAttributeName()
	var subName string
	if sub != "" {
		subAttr, ok := attr.SubAttributes().ContainsAttribute(sub)
		if !ok {
			return scimerr.ScimErrorInvalidPath
		}
		subName = subAttr.Name()
	}
	for _, e := range all {
		if !passes(v, e) {
			kept = append(kept, e)
			continue
		}
		matched++
		switch {
		case op == scim.PatchOperationRemove && subName == "":
			continue // the whole value goes
		case subName != "":
			setSub(e, subName, op, value)
		default:
			m, ok := value.(map[string]any)
			if !ok {
				return invalidValue("The value for " + path.String() + " must be an object.")
			}
			if op == scim.PatchOperationReplace {
				clear(e)
			}
			for k, x := range m {
				e[k] = x
			}
		}
		kept = append(kept, e)
	}
	if matched == 0 && op != scim.PatchOperationRemove {
		// add or replace of a value that is not there: a new value made
		// of the filter's equalities (emails[type eq "work"].value).
		e := equalities(path.ValueExpression, attr)
		if e == nil {
			return scimerr.ScimErrorNoTarget
		}
		if subName != "" {
			e[subName] = value
		} else if m, ok := value.(map[string]any); ok {
			for k, x := range m {
				e[k] = x
			}
		} else {
			return invalidValue("The value for " + path.String() + " must be an object.")
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 {
		delete(container, name)
	} else {
		container[name] = kept
	}
	return nil
}

// setWhole applies op to the whole attribute attr in container.
func setWhole(container map[string]any, attr schema.CoreAttribute, op string, value any) error {
	name := attr.Name()
	switch {
	case op == scim.PatchOperationRemove && value != nil && attr.MultiValued():
		// Remove the given values (members of a group): those equal on
		// "value".
		drop := map[string]bool{}
		for _, x := range elements(value) {
			if s, ok := x["value"].(string); ok {
				drop[s] = true
			}
		}
		var kept []any
		for _, e := range elements(container[name]) {
			if s, _ := e["value"].(string); !drop[s] {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(container, name)
		} else {
			container[name] = kept
		}
	case op == scim.PatchOperationRemove:
		delete(container, name)
	case attr.MultiValued():
		var add []any
		switch v := value.(type) {
		case []any:
			add = v
		case nil:
		default:
			add = []any{v}
		}
		if op == scim.PatchOperationReplace {
			if len(add) == 0 {
				delete(container, name)
			} else {
				container[name] = add
			}
			return nil
		}
		old, _ := container[name].([]any)
		container[name] = append(old, add...)
	case attr.AttributeType() == "complex":
		m, ok := value.(map[string]any)
		if !ok {
			return invalidValue("The value of " + name + " must be an object.")
		}
		old, _ := container[name].(map[string]any)
		if old == nil {
			old = map[string]any{}
		}
		for k, v := range m {
			old[k] = v
		}
		container[name] = old
	default:
		if value == nil {
			delete(container, name)
		} else {
			container[name] = value
		}
	}
	return nil
}

// setSub applies op with value to sub-attribute sub of m.
func setSub(m map[string]any, sub, op string, value any) {
	if op == scim.PatchOperationRemove || value == nil {
		delete(m, sub)
		return
	}
	m[sub] = value
}

// elements returns the values of a multi-valued attribute that are
// objects.
func elements(v any) []map[string]any {
	var out []map[string]any
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
	case []map[string]any:
		out = v
	case map[string]any:
		out = []map[string]any{v}
	}
	return out
}

// passes reports whether value e passes filter v (a value of the wrong
// type passes nothing: the library panics on it).
func passes(v scimfilter.Validator, e map[string]any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return v.PassesFilter(e) == nil
}

// equalities returns the value a filter of equalities joined by and
// describes (type eq "work" → {"type": "work"}), nil when the filter is
// anything else.
func equalities(e filter.Expression, attr schema.CoreAttribute) map[string]any {
	switch e := e.(type) {
	case *filter.AttributeExpression:
		if e.Operator != filter.EQ {
			return nil
		}
		sub, ok := attr.SubAttributes().ContainsAttribute(e.AttributePath.AttributeName)
		if !ok {
			return nil
		}
		return map[string]any{sub.Name(): e.CompareValue}
	case *filter.LogicalExpression:
		if e.Operator != filter.AND {
			return nil
		}
		l, r := equalities(e.Left, attr), equalities(e.Right, attr)
		if l == nil || r == nil {
			return nil
		}
		for k, v := range r {
			l[k] = v
		}
		return l
	}
	return nil
}
