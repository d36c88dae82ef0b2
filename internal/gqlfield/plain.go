package gqlfield

import (
	"bytes"
	"io"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/weibohbase/gateway/internal/respbuf"
)

// Plain objects.
//
// An object whose selected fields are all plain — __typename, leaves bound
// to struct fields or methods without context or error, and objects bound
// the same way whose own selections are plain — needs none of the field
// set's machinery: no goroutine, no FieldContext (nothing below it can
// report an error), no boxed marshaller per field. `make generate` gives
// every object type <O> of the schema that has such fields
//
//   - a function _<O>_isPlain, the PlainField of its fields;
//   - a method _<O>_write, which appends the object as JSON to a buffer,
//     exactly the bytes its FieldSet writes, and reports false when a value
//     the field set would null or report instead (a non-null field whose
//     value is nil, or whose marshaller returns graphql.Null) stops it;
//   - a method _<O>_plain, called first by the object's marshaller _<O>:
//     when IsPlain reports the selection plain, it writes the object into
//     a NewPlainObject under RecoverPlain and returns it; otherwise, or when the write stopped or panicked, it
//     returns nil and the marshaller builds the object's field set as
//     before (which reports the null or the panic, with its path, as it
//     always has).
//
// The object is written when it is executed, so a panic in a bound method
// happens where the field set would have run the method, and the
// marshaller's fallback runs it again under the field set's recover. The
// methods bound this way only read memory (gqlgen's codegen data shows no
// context or error), so running one twice changes nothing. Its storage goes
// back to package respbuf's pool when the response is marshalled.
//
// On a home-timeline page every edge is plain (cursor, node { id content
// createdAt author { id username } }): one pooled buffer an edge instead of
// three field sets, two FieldContexts and a boxed marshaller for each of
// eight fields. The one thing the plain path does not do that the field
// sets do is run the field middleware, which already skips plain bindings
// (see the package comment).

// PlainField reports whether a collected field of an object type is plain:
// generated for each object type (_<O>_isPlain), from the codegen data.
type PlainField func(oc *graphql.OperationContext, f graphql.CollectedField) bool

// plainOff turns the plain path off (SetPlain).
var plainOff atomic.Bool

// plainWritten counts the objects the plain path wrote (PlainWritten).
var plainWritten atomic.Int64

// PlainWritten returns how many objects the plain path has written in this
// process (each counted once, with what it holds): the tests' evidence that
// the path ran.
func PlainWritten() int64 { return plainWritten.Load() }

// SetPlain turns the plain path on (the default) or off, for every
// operation of the process: off, every object is built as a field set. The
// tests compare the two paths' answers byte for byte.
func SetPlain(on bool) { plainOff.Store(!on) }

// IsPlain reports whether selection set sel, collected on an object
// satisfying satisfies, is plain: the selection carries no directive (the
// collected fields cannot depend on the operation's variables, as
// CollectFields' cache requires) and field accepts every collected field.
// The answer depends on the parsed document only, so it is cached under
// sel's identity, as CollectFields caches.
func IsPlain(oc *graphql.OperationContext, sel ast.SelectionSet, satisfies []string, field PlainField) bool {
	if plainOff.Load() || len(sel) == 0 || oc.Doc == nil {
		return false
	}
	key := newCollectKey(sel, satisfies)
	if plain, ok := lookup(&fieldsCache, fieldsCache.plain, key); ok {
		return plain
	}
	plain := static(oc.Doc, sel)
	if plain {
		for _, f := range CollectFields(oc, sel, satisfies) {
			if f.IsDeferred() || !field(oc, f) {
				plain = false
				break
			}
		}
	}
	if len(oc.RawQuery) <= maxCollectedQuery {
		store(&fieldsCache, fieldsCache.plain, key, plain, len(oc.RawQuery))
	}
	return plain
}

// PlainKey writes the key of field i of fields to b, with the comma before
// it unless it is the first, and reports true; or it writes nothing and
// reports false when a field before it has the same alias (which
// CollectFields merges, so never), as FieldSet.MarshalGQL skips it.
func PlainKey(b *bytes.Buffer, fields []graphql.CollectedField, i int) bool {
	alias := fields[i].Alias
	if seen(fields[:i], alias) {
		return false
	}
	if i == 0 {
		b.WriteByte('"')
	} else {
		b.WriteString(`,"`)
	}
	b.WriteString(alias)
	b.WriteString(`":`)
	return true
}

// PlainObject is an object written by the plain path: its JSON, in a
// buffer whose storage comes from package respbuf's pool and goes back to
// it when the object is marshalled.
type PlainObject struct {
	buf bytes.Buffer
	p   *[]byte // respbuf's slice the storage came from; nil once given back
}

// NewPlainObject returns an empty object to write into (Buffer), for Done
// or Drop.
func NewPlainObject() *PlainObject {
	p := respbuf.Get()
	return &PlainObject{buf: *bytes.NewBuffer((*p)[:0]), p: p}
}

// Buffer is the buffer the object is written into.
func (o *PlainObject) Buffer() *bytes.Buffer { return &o.buf }

// Done returns the object, written.
func (o *PlainObject) Done() *PlainObject {
	plainWritten.Add(1)
	return o
}

// Drop gives the object's storage back, for an object not written.
func (o *PlainObject) Drop() {
	*o.p = o.buf.Bytes()[:0]
	respbuf.Put(o.p)
	o.p = nil
}

// MarshalGQL writes the object's JSON and gives its storage back: a
// response is marshalled once, and a second call panics rather than write
// what the storage holds by then.
func (o *PlainObject) MarshalGQL(w io.Writer) {
	if o.p == nil {
		panic("gqlfield: a plain object marshalled twice")
	}
	_, _ = w.Write(o.buf.Bytes())
	o.Drop()
}

// RecoverPlain is deferred by the generated _<O>_plain methods: a panic
// while writing o sets *m to nil, so that the object is built as a field
// set, which runs the panicking method again and reports the panic as it
// always does, and gives o's storage back.
func RecoverPlain(m *graphql.Marshaler, o *PlainObject) {
	if recover() != nil {
		*m = nil
		o.Drop()
	}
}
