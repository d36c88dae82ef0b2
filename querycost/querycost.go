// Package querycost measures a parsed GraphQL document before it is
// validated or executed, so that a server can refuse what is too big in
// milliseconds: the number of nodes (objects) the selected operation can
// return, in the spirit of GitHub's node limit; the nesting depth; and the
// size of the document once its fragments are expanded (fields, aliases,
// and the work of checking that same-named fields can merge, the part of
// validation that is quadratic).
//
// Measure works on the raw AST (gqlparser's parser output, not yet
// validated) and never expands a fragment twice: each fragment's measures
// are computed once and reused, so a document of fragments that double one
// another costs as much to measure as its text, and measuring stops as soon
// as the expanded size passes its limit.
//
// Counting rules (all upper bounds, computed from the query text and the
// request's variables):
//   - every object (composite-typed value) the response can contain counts
//     one node; leaves (scalars, enums) count nothing;
//   - a connection field (one with a `first` argument) multiplies what is
//     under it: its list fields (edges) count `first` items, or `last` for a
//     connection paged backward (Sizes.DefaultFirst when both are absent, at
//     most Sizes.MaxFirst), and an edge's node is the
//     edge's item, not another node (GitHub counts a connection's items);
//   - a list field with a `first` argument of its own (a ranked list, not
//     a connection) counts `first` items, as a connection's edges;
//   - another list field counts Sizes.Lists["Type.field"] items, or
//     Sizes.DefaultList;
//   - introspection is counted like any field: its lists count their average
//     length in the schema (IntrospectionSizes), so an introspection query
//     costs about the number of objects it returns, and `ofType` counts only
//     as deep as the schema's types are wrapped;
//   - a field in Sizes.Weights counts its weight for each object instead
//     of one;
//   - @skip and @include are ignored (the bound assumes every field is
//     selected).
package querycost

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
)

// Sizes says how many items a list field can return.
type Sizes struct {
	// DefaultFirst is a connection's page size when `first` is absent.
	DefaultFirst int
	// MaxFirst is the largest `first` a connection accepts; larger values are
	// refused by the resolver before any work, so they count as MaxFirst.
	MaxFirst int
	// Lists bounds unpaged list fields, keyed "Type.field" (e.g.
	// "Department.ancestors"); IntrospectionSizes adds the introspection lists.
	Lists map[string]int
	// DefaultList bounds an unpaged list field missing from Lists.
	DefaultList int
	// Weights are the nodes an object-typed field counts for each object it
	// returns instead of one, keyed "Type.field" (e.g. "Mutation.uploadMedia"):
	// fields whose work is far beyond reading an object, such as decoding
	// and resizing a picture.
	Weights map[string]int64
}

// Limits are the largest measures a document may have; zero means no limit.
type Limits struct {
	// MaxNodes bounds Cost.Nodes (code QUERY_TOO_COMPLEX at the edge).
	MaxNodes int64
	// MaxDepth bounds Cost.Depth (QUERY_TOO_DEEP).
	MaxDepth int
	// MaxFields bounds Cost.Fields, the field selections of the document
	// with every fragment spread expanded.
	MaxFields int64
	// MaxAliases bounds Cost.Aliases, the aliased field selections once
	// fragments are expanded.
	MaxAliases int64
	// MaxOverlap bounds Cost.Overlap, the work of validation's
	// overlapping-fields check.
	MaxOverlap int64
}

// Cost is what Measure found.
type Cost struct {
	// Nodes is the most objects the selected operation can return (0 when
	// the operation is not in the document).
	Nodes int64 `json:"nodes"`
	// Depth is the deepest field nesting of the document (root fields are 1).
	Depth int `json:"depth"`
	// Fields is the number of field selections with fragments expanded,
	// over every operation and every fragment no operation spreads.
	Fields int64 `json:"fields"`
	// Aliases is the number of aliased field selections, counted like Fields.
	Aliases int64 `json:"aliases"`
	// Overlap bounds the comparisons of validation's overlapping-fields
	// check ("fields with one response name can merge"), which compares
	// every two selections of one response name in a selection set, their
	// descendants included: the sum, over selection sets (fragments
	// expanded) and response names selected more than once, of half the
	// square of those selections' expanded size. Selecting `id` 50 times
	// in one set makes 1,250; 37 copies of a connection each selecting 50
	// fields make about 1.9 million (and a validation slow enough to matter).
	Overlap int64 `json:"overlap"`
	// Introspection tells whether the document selects __schema or __type.
	Introspection bool `json:"-"`
}

// Measures, the names Exceeded uses.
const (
	MeasureNodes   = "nodes"
	MeasureDepth   = "depth"
	MeasureFields  = "fields"
	MeasureAliases = "aliases"
	MeasureOverlap = "overlap"
)

// Exceeded is the error of a document over one of its Limits. Value is the
// measured value, or (when measuring stopped early) a value just over Max.
type Exceeded struct {
	// Measure is one of the Measure* names.
	Measure string
	// Value is what was measured (at least Max+1).
	Value int64
	// Max is the limit.
	Max int64
}

func (e *Exceeded) Error() string {
	switch e.Measure {
	case MeasureNodes:
		return fmt.Sprintf("the query can return up to %d nodes, more than the limit of %d: ask for smaller pages (first) or fewer nested connections", e.Value, e.Max)
	case MeasureDepth:
		return fmt.Sprintf("the query is nested %d levels deep, more than the limit of %d", e.Value, e.Max)
	case MeasureOverlap:
		return fmt.Sprintf("the query repeats fields so much that checking them would take %d steps, more than the limit of %d: select each field once", e.Value, e.Max)
	default:
		return fmt.Sprintf("the query has %d %s once its fragments are expanded, more than the limit of %d", e.Value, e.Measure, e.Max)
	}
}

// capValue is where saturating arithmetic stops: far above any limit and
// exact in a float64 JSON number.
const capValue = int64(1) << 52

func add(a, b int64) int64 {
	if a >= capValue-b {
		return capValue
	}
	return a + b
}

func mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > capValue/b {
		return capValue
	}
	return a * b
}

// Measure measures doc against schema: Nodes for the operation named
// opName ("" when the document has exactly one), with vars the request's
// raw variable values (as decoded from JSON), and the static measures over
// the whole document. It returns an *Exceeded as soon as a static measure
// passes its limit in lim (then Cost holds what was measured so far), and
// after the node count when Nodes passes lim.MaxNodes; depth is checked
// last, so a too-big document reports its size first.
func Measure(schema *ast.Schema, doc *ast.QueryDocument, opName string, vars map[string]any, sizes Sizes, lim Limits) (Cost, error) {
	s := &static{schema: schema, lim: lim, frags: fragmentIndex(doc), memo: map[string]*shape{}}
	var c Cost
	for _, op := range doc.Operations {
		sh, err := s.selectionSet(op.SelectionSet, rootType(schema, op.Operation))
		c.Depth = max(c.Depth, sh.depth)
		c.Introspection = c.Introspection || sh.introspection
		if err != nil {
			c.Fields, c.Aliases, c.Overlap = s.fields, s.aliases, s.overlap
			return c, err
		}
	}
	for _, f := range doc.Fragments {
		if s.memo[f.Name] != nil {
			continue // spread by an operation: already counted there
		}
		sh, err := s.fragment(f.Name)
		if sh != nil {
			c.Depth = max(c.Depth, sh.depth)
		}
		if err == nil {
			// An unspread fragment counts once, as written.
			s.fields, s.aliases = add(s.fields, sh.fields), add(s.aliases, sh.aliases)
			s.overlap = add(s.overlap, add(sh.top, sh.nested))
			err = s.checkSize()
		}
		if err != nil {
			c.Fields, c.Aliases, c.Overlap = s.fields, s.aliases, s.overlap
			return c, err
		}
	}
	c.Fields, c.Aliases, c.Overlap = s.fields, s.aliases, s.overlap

	if op := operation(doc, opName); op != nil {
		n := &nodes{schema: schema, sizes: sizes, frags: s.frags, op: op, vars: vars, memo: map[nodeKey]int64{},
			wrap: -1}
		c.Nodes = n.selectionSet(op.SelectionSet, rootType(schema, op.Operation), 0, 0, false)
	}
	if lim.MaxNodes > 0 && c.Nodes > lim.MaxNodes {
		return c, &Exceeded{Measure: MeasureNodes, Value: c.Nodes, Max: lim.MaxNodes}
	}
	if lim.MaxDepth > 0 && c.Depth > lim.MaxDepth {
		return c, &Exceeded{Measure: MeasureDepth, Value: int64(c.Depth), Max: int64(lim.MaxDepth)}
	}
	return c, nil
}

func fragmentIndex(doc *ast.QueryDocument) map[string]*ast.FragmentDefinition {
	m := make(map[string]*ast.FragmentDefinition, len(doc.Fragments))
	for _, f := range doc.Fragments {
		if _, dup := m[f.Name]; !dup {
			m[f.Name] = f
		}
	}
	return m
}

// operation returns the operation a request names, or the only one.
func operation(doc *ast.QueryDocument, name string) *ast.OperationDefinition {
	if name == "" {
		if len(doc.Operations) == 1 {
			return doc.Operations[0]
		}
		return nil
	}
	return doc.Operations.ForName(name)
}

func rootType(schema *ast.Schema, op ast.Operation) string {
	var d *ast.Definition
	switch op {
	case ast.Mutation:
		d = schema.Mutation
	case ast.Subscription:
		d = schema.Subscription
	default:
		d = schema.Query
	}
	if d == nil {
		return ""
	}
	return d.Name
}

// fieldDef returns the definition of field name on type typ, nil when
// either is unknown (validation reports it later).
func fieldDef(schema *ast.Schema, typ, name string) *ast.FieldDefinition {
	d := schema.Types[typ]
	if d == nil {
		return nil
	}
	return d.Fields.ForName(name)
}

// intArg returns the value of argument name of f, resolving variables
// from vars or the operation's defaults; ok is false when the argument is
// absent, null or not an integer.
func intArg(f *ast.Field, name string, op *ast.OperationDefinition, vars map[string]any) (int64, bool) {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return 0, false
	}
	v := a.Value
	if v.Kind == ast.Variable {
		if raw, ok := vars[v.Raw]; ok {
			return number(raw)
		}
		d := op.VariableDefinitions.ForName(v.Raw)
		if d == nil || d.DefaultValue == nil {
			return 0, false
		}
		v = d.DefaultValue
	}
	if v.Kind != ast.IntValue {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	if err != nil {
		return math.MaxInt64, true // out of range: at least as big as any limit
	}
	return n, true
}

// number reads a JSON-decoded variable value as an integer.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) {
			return 0, false
		}
		return floatInt(f), true
	case float64:
		if n != math.Trunc(n) {
			return 0, false
		}
		return floatInt(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	}
	return 0, false
}

func floatInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
