package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/server/pushws"
)

// rawPayload is the Extensions key of a response that carries a
// subsequent payload of incremental delivery, encoded whole: pushws sends
// it as it is.
const rawPayload = pushws.PayloadKey

// rawPayloadOf returns the subsequent payload resp carries; nil for an
// ordinary response.
func rawPayloadOf(resp *graphql.Response) json.RawMessage {
	if resp == nil || len(resp.Extensions) != 1 {
		return nil
	}
	b, _ := resp.Extensions[rawPayload].(json.RawMessage)
	return b
}

// incrementalPart is one entry of a subsequent payload's "incremental"
// list: a deferred fragment's data, or a streamed list's items, at path.
type incrementalPart struct {
	Errors gqlerror.List `json:"errors,omitempty"`
	Data   any           `json:"data,omitempty"`
	Items  []any         `json:"items,omitempty"`
	Path   ast.Path      `json:"path"`
	Label  string        `json:"label,omitempty"`
}

// deferredGroup is the fields of one deferred fragment at one object, as
// the initial response of gqlgen's executor held them.
type deferredGroup struct {
	key    string // path and label
	part   incrementalPart
	fields map[string]any
}

// incremental turns the responses of gqlgen's executor for an operation
// with @defer or @stream into the payloads of incremental delivery.
//
// gqlgen's executor defers only the fields it resolves concurrently (those
// with resolvers): it puts the others of a deferred fragment in the
// initial response, and a null in place of each deferred one, which a
// non-null field must not hold. So the fields selected only in deferred
// fragments are taken out of the initial payload, kept by fragment and
// object (deferredGroup), and sent with the executor's deferred result of
// that fragment and object when it comes, or, for a fragment of which the
// executor defers nothing, after all of its results.
//
// The executor resolves lists whole: a streamed list's items past its
// initialCount are taken out of the initial payload and sent after it,
// one item a payload, before the deferred fragments' payloads. A streamed
// list inside a deferred fragment is sent whole with the fragment.
type incremental struct {
	rc       *graphql.OperationContext
	next     graphql.ResponseHandler
	queue    []incrementalPart // streamed items not yet sent
	groups   []*deferredGroup  // deferred fragments not yet sent, in the order of the data
	started  bool
	deferred bool // the executor has deferred results to send
	more     bool // the last payload sent said hasNext: true
}

func newIncremental(rc *graphql.OperationContext, next graphql.ResponseHandler) *incremental {
	return &incremental{rc: rc, next: next}
}

// response is the operation's graphql.ResponseHandler.
func (s *incremental) response(ctx context.Context) *graphql.Response {
	if !s.started {
		s.started = true
		r := s.next(ctx)
		if r == nil {
			return nil
		}
		s.deferred = r.HasNext != nil && *r.HasNext
		if len(r.Data) > 0 && !bytes.Equal(r.Data, []byte("null")) {
			s.split(r)
		}
		s.more = s.hasNext()
		r.HasNext = &s.more
		return r
	}
	if len(s.queue) > 0 {
		p := s.queue[0]
		s.queue = s.queue[1:]
		return s.payload([]incrementalPart{p})
	}
	if s.deferred {
		if r := s.result(ctx); r != nil {
			s.deferred = r.HasNext != nil && *r.HasNext
			return s.payload(s.deferredParts(r))
		}
		s.deferred = false
		if err := ctx.Err(); err != nil {
			// The fragments still kept wait for results that will not
			// come: the request ends with why.
			s.groups = nil
			e := errorResponse(CodeTimeout, "the request ran out of time; nothing more was read")
			if errors.Is(err, context.Canceled) {
				e = errorResponse(CodeTimeout, "the request was canceled")
			}
			return s.errorPayload(e.Errors)
		}
	}
	if len(s.groups) > 0 {
		var parts []incrementalPart
		for _, g := range s.groups {
			parts = append(parts, g.done(nil))
		}
		s.groups = nil
		return s.payload(parts)
	}
	if s.more {
		return s.payload(nil)
	}
	return nil
}

// result is the executor's next deferred result; nil when there is none,
// or ctx ended first (the executor's handler waits for the result without
// minding ctx: a request that ended does not wait with it).
func (s *incremental) result(ctx context.Context) *graphql.Response {
	got := make(chan *graphql.Response, 1)
	go func() { got <- s.next(ctx) }()
	select {
	case r := <-got:
		return r
	case <-ctx.Done():
		return nil
	}
}

// hasNext tells whether payloads are still to come.
func (s *incremental) hasNext() bool {
	return len(s.queue) > 0 || s.deferred || len(s.groups) > 0
}

// deferredParts is the parts of the executor's deferred result r: its
// fragment's kept fields with r's, after the kept fragments at a path
// that r's path extends (a client merges r's data into their objects).
func (s *incremental) deferredParts(r *graphql.Response) []incrementalPart {
	var parts []incrementalPart
	key := groupKey(r.Path, r.Label)
	var data any
	if len(r.Data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(r.Data))
		dec.UseNumber()
		_ = dec.Decode(&data)
	}
	var own *deferredGroup
	s.groups = slices.DeleteFunc(s.groups, func(g *deferredGroup) bool {
		switch {
		case g.key == key:
			own = g
			return true
		case len(g.part.Path) < len(r.Path) && pathHasPrefix(r.Path, g.part.Path):
			parts = append(parts, g.done(nil))
			return true
		}
		return false
	})
	if own == nil {
		own = &deferredGroup{part: incrementalPart{Path: r.Path, Label: r.Label}}
	}
	own.part.Errors = append(own.part.Errors, r.Errors...)
	return append(parts, own.done(data))
}

// done is g's part, its kept fields with data's (an object, or null when
// a non-null field of the fragment failed).
func (g *deferredGroup) done(data any) incrementalPart {
	p := g.part
	if p.Path == nil {
		p.Path = ast.Path{}
	}
	switch d := data.(type) {
	case map[string]any:
		out := make(map[string]any, len(g.fields)+len(d))
		for k, v := range g.fields {
			out[k] = v
		}
		for k, v := range d {
			out[k] = v
		}
		p.Data = out
	case nil:
		if g.fields != nil {
			p.Data = g.fields
		} else {
			p.Data = map[string]any{}
		}
	default:
		p.Data = d
	}
	return p
}

// payload is a subsequent payload of parts.
func (s *incremental) payload(parts []incrementalPart) *graphql.Response {
	s.more = s.hasNext()
	b, err := json.Marshal(struct {
		Incremental []incrementalPart `json:"incremental,omitempty"`
		HasNext     bool              `json:"hasNext"`
	}{parts, s.more})
	if err != nil {
		s.queue, s.groups, s.deferred = nil, nil, false
		return s.errorPayload(errorResponse(CodeInternal, "the response could not be encoded").Errors)
	}
	return &graphql.Response{Extensions: map[string]any{rawPayload: json.RawMessage(b)}}
}

// errorPayload is the last payload: errs, and no more.
func (s *incremental) errorPayload(errs gqlerror.List) *graphql.Response {
	s.more = false
	b, _ := json.Marshal(struct {
		Errors  gqlerror.List `json:"errors"`
		HasNext bool          `json:"hasNext"`
	}{errs, false})
	return &graphql.Response{Extensions: map[string]any{rawPayload: json.RawMessage(b)}}
}

// split takes the fields of deferred fragments (s.groups, with their
// errors) and the items past their initialCount of streamed lists
// (s.queue) out of r.
func (s *incremental) split(r *graphql.Response) {
	dec := json.NewDecoder(bytes.NewReader(r.Data))
	dec.UseNumber()
	var data any
	if dec.Decode(&data) != nil {
		return
	}
	data = s.value(data, s.rc.Operation.SelectionSet, nil, nil, false)
	if len(s.queue) == 0 && len(s.groups) == 0 {
		return
	}
	// An error at or under a field or item taken out goes with its
	// fragment or item.
	r.Errors = slices.DeleteFunc(r.Errors, func(e *gqlerror.Error) bool {
		for i := range s.queue {
			if pathHasPrefix(e.Path, s.queue[i].Path) {
				s.queue[i].Errors = append(s.queue[i].Errors, e)
				return true
			}
		}
		for _, g := range s.groups {
			for k := range g.fields {
				if pathHasPrefix(e.Path, appendPath(g.part.Path, ast.PathName(k))) {
					g.part.Errors = append(g.part.Errors, e)
					return true
				}
			}
		}
		return false
	})
	if b, err := json.Marshal(data); err == nil {
		r.Data = b
	}
}

// value walks v, the value at path of a field selecting ss (streamed by
// stream, unless nil or inDeferred: v is in a deferred fragment's
// fields), and returns it without its deferred fields and streamed items.
func (s *incremental) value(v any, ss ast.SelectionSet, path ast.Path, stream *ast.Directive, inDeferred bool) any {
	switch x := v.(type) {
	case map[string]any:
		s.object(x, ss, path, inDeferred)
	case []any:
		cut, label := len(x), ""
		if stream != nil && !inDeferred {
			args := stream.ArgumentMap(s.rc.Variables)
			if on, _ := args["if"].(bool); on {
				n, _ := args["initialCount"].(int64)
				cut = int(min(max(n, 0), int64(len(x))))
				label, _ = args["label"].(string)
			}
		}
		for i := range x[:cut] {
			x[i] = s.value(x[i], ss, appendPath(path, ast.PathIndex(i)), nil, inDeferred)
		}
		for i := cut; i < len(x); i++ {
			at := appendPath(path, ast.PathIndex(i))
			k := len(s.queue)
			s.queue = append(s.queue, incrementalPart{Path: at, Label: label})
			s.queue[k].Items = []any{s.value(x[i], ss, at, nil, false)}
		}
		return x[:cut]
	}
	return v
}

// selected is one selection of a response key: the field, and the label
// of the deferred fragment it is in (deferred false: it is not).
type selected struct {
	field    *ast.Field
	deferred bool
	label    string
}

// object walks obj, the value at path of a selection set ss.
func (s *incremental) object(obj map[string]any, ss ast.SelectionSet, path ast.Path, inDeferred bool) {
	var keys []string
	fields := map[string][]selected{}
	var collect func(ss ast.SelectionSet, deferred bool, label string, seen map[string]bool)
	collect = func(ss ast.SelectionSet, deferred bool, label string, seen map[string]bool) {
		for _, sel := range ss {
			switch x := sel.(type) {
			case *ast.Field:
				key := x.Alias
				if key == "" {
					key = x.Name
				}
				if fields[key] == nil {
					keys = append(keys, key)
				}
				fields[key] = append(fields[key], selected{x, deferred, label})
			case *ast.InlineFragment:
				d, l := s.deferOf(x.Directives, deferred, label)
				collect(x.SelectionSet, d, l, seen)
			case *ast.FragmentSpread:
				if !seen[x.Name] {
					seen[x.Name] = true
					if f := s.rc.Doc.Fragments.ForName(x.Name); f != nil {
						d, l := s.deferOf(x.Directives, deferred, label)
						collect(f.SelectionSet, d, l, seen)
					}
					delete(seen, x.Name)
				}
			}
		}
	}
	collect(ss, false, "", map[string]bool{})
	for _, key := range keys {
		v, ok := obj[key]
		if !ok {
			continue
		}
		var (
			sub    ast.SelectionSet
			stream *ast.Directive
		)
		deferredOnly, label := true, ""
		for _, f := range fields[key] {
			sub = append(sub, f.field.SelectionSet...)
			if d := f.field.Directives.ForName("stream"); d != nil && stream == nil {
				stream = d
			}
			if !f.deferred {
				deferredOnly = false
			} else if label == "" {
				label = f.label
			}
		}
		at := appendPath(path, ast.PathName(key))
		if !deferredOnly {
			obj[key] = s.value(v, sub, at, stream, inDeferred)
			continue
		}
		delete(obj, key)
		g := s.group(path, label)
		g.fields[key] = s.value(v, sub, at, stream, true)
	}
}

// deferOf is whether a fragment with directives ds, in a deferred
// fragment of label when deferred, is deferred, and its label.
func (s *incremental) deferOf(ds ast.DirectiveList, deferred bool, label string) (bool, string) {
	d := ds.ForName("defer")
	if d == nil {
		return deferred, label
	}
	args := d.ArgumentMap(s.rc.Variables)
	if on, ok := args["if"].(bool); ok && !on {
		return deferred, label
	}
	l, _ := args["label"].(string)
	return true, l
}

// group returns the deferredGroup of the fragment of label at path.
func (s *incremental) group(path ast.Path, label string) *deferredGroup {
	key := groupKey(path, label)
	for _, g := range s.groups {
		if g.key == key {
			return g
		}
	}
	g := &deferredGroup{key: key, part: incrementalPart{Path: path, Label: label}, fields: map[string]any{}}
	s.groups = append(s.groups, g)
	return g
}

// groupKey is the key of a deferred fragment at path with label.
func groupKey(path ast.Path, label string) string {
	b, _ := json.Marshal(path)
	return string(b) + "\x00" + label
}

// pathHasPrefix tells whether path starts with prefix.
func pathHasPrefix(path, prefix ast.Path) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i, e := range prefix {
		if path[i] != e {
			return false
		}
	}
	return true
}

// appendPath is path with e appended, sharing nothing with path.
func appendPath(path ast.Path, e ast.PathElement) ast.Path {
	return append(path[:len(path):len(path)], e)
}
