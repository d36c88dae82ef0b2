package querycost

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// shape is the static measure of one selection set (or fragment), relative
// to its own level.
type shape struct {
	fields, aliases int64 // expanded field and alias selections
	depth           int   // deepest field, the set's own fields being 1
	// top is the overlap work of the set's own level (see Cost.Overlap),
	// nested that of every set below it.
	top, nested int64
	// names are the set's own response names with inline fragments and
	// spreads flattened: a fragment's names add to the set that spreads it.
	names         map[string]nameStat
	introspection bool
}

// nameStat is how often a response name is selected in a set, and the
// expanded size of those selections.
type nameStat struct{ count, size int64 }

// static computes the measures that do not depend on variables. fields,
// aliases and overlap are running totals over the document, checked after
// every step, so that a document whose expansion explodes stops being
// measured at once.
type static struct {
	schema                   *ast.Schema
	lim                      Limits
	frags                    map[string]*ast.FragmentDefinition
	memo                     map[string]*shape // nil value: being measured (a cycle)
	fields, aliases, overlap int64
}

func (s *static) checkSize() error {
	switch {
	case s.lim.MaxFields > 0 && s.fields > s.lim.MaxFields:
		return &Exceeded{Measure: MeasureFields, Value: s.fields, Max: s.lim.MaxFields}
	case s.lim.MaxAliases > 0 && s.aliases > s.lim.MaxAliases:
		return &Exceeded{Measure: MeasureAliases, Value: s.aliases, Max: s.lim.MaxAliases}
	case s.lim.MaxOverlap > 0 && s.overlap > s.lim.MaxOverlap:
		return &Exceeded{Measure: MeasureOverlap, Value: s.overlap, Max: s.lim.MaxOverlap}
	}
	return nil
}

// selectionSet measures ss, a selection set on type typ ("" when unknown).
// On error the returned shape holds what was measured so far.
func (s *static) selectionSet(ss ast.SelectionSet, typ string) (*shape, error) {
	sh := &shape{names: map[string]nameStat{}}
	if err := s.collect(ss, typ, sh); err != nil {
		return sh, err
	}
	// Validation compares every two selections of one response name,
	// descendants included: at most size²/2 comparisons per name.
	for _, n := range sh.names {
		if n.count > 1 {
			sh.top = add(sh.top, mul(n.size, n.size)/2)
		}
	}
	s.overlap = add(s.overlap, sh.top)
	return sh, s.checkSize()
}

// collect adds the selections of ss to sh, flattening inline fragments and
// fragment spreads into sh's names.
func (s *static) collect(ss ast.SelectionSet, typ string, sh *shape) error {
	for _, sel := range ss {
		switch x := sel.(type) {
		case *ast.Field:
			s.fields, sh.fields = add(s.fields, 1), add(sh.fields, 1)
			name := x.Name
			if x.Alias != "" && x.Alias != x.Name {
				s.aliases, sh.aliases = add(s.aliases, 1), add(sh.aliases, 1)
				name = x.Alias
			}
			if x.Name == "__schema" || x.Name == "__type" {
				sh.introspection = true
			}
			if err := s.checkSize(); err != nil {
				sh.depth = max(sh.depth, 1)
				return err
			}
			depth, size := 1, int64(1)
			if len(x.SelectionSet) > 0 {
				childType := ""
				if def := fieldDef(s.schema, typ, x.Name); def != nil {
					childType = def.Type.Name()
				}
				child, err := s.selectionSet(x.SelectionSet, childType)
				sh.fields, sh.aliases = add(sh.fields, child.fields), add(sh.aliases, child.aliases)
				sh.nested = add(sh.nested, add(child.top, child.nested))
				sh.introspection = sh.introspection || child.introspection
				depth, size = 1+child.depth, add(1, child.fields)
				if err != nil {
					sh.depth = max(sh.depth, depth)
					return err
				}
			}
			sh.depth = max(sh.depth, depth)
			n := sh.names[name]
			sh.names[name] = nameStat{add(n.count, 1), add(n.size, size)}
		case *ast.InlineFragment:
			t := typ
			if x.TypeCondition != "" {
				t = x.TypeCondition
			}
			if err := s.collect(x.SelectionSet, t, sh); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			f, err := s.fragment(x.Name)
			if err != nil {
				return err
			}
			if f == nil {
				continue // unknown, or a cycle: validation refuses both
			}
			s.fields, s.aliases = add(s.fields, f.fields), add(s.aliases, f.aliases)
			s.overlap = add(s.overlap, f.nested)
			sh.fields, sh.aliases = add(sh.fields, f.fields), add(sh.aliases, f.aliases)
			sh.nested = add(sh.nested, f.nested)
			sh.depth = max(sh.depth, f.depth)
			sh.introspection = sh.introspection || f.introspection
			if err := s.checkSize(); err != nil {
				return err
			}
			// At most f.fields entries, and f.fields was just added to the
			// running total: merging costs no more than the size limit.
			for name, k := range f.names {
				n := sh.names[name]
				sh.names[name] = nameStat{add(n.count, k.count), add(n.size, k.size)}
			}
		}
	}
	return nil
}

// fragment returns the memoized shape of fragment name: nil for an unknown
// fragment or one being measured (a cycle).
func (s *static) fragment(name string) (*shape, error) {
	if sh, seen := s.memo[name]; seen {
		return sh, nil
	}
	f := s.frags[name]
	if f == nil {
		return nil, nil
	}
	s.memo[name] = nil
	// The fragment's own walk counts into the running totals, so that a huge
	// fragment stops early too; its expansion is then added by each spread.
	fields, aliases, overlap := s.fields, s.aliases, s.overlap
	sh, err := s.selectionSet(f.SelectionSet, f.TypeCondition)
	if err != nil {
		return sh, err
	}
	s.fields, s.aliases, s.overlap = fields, aliases, overlap
	s.memo[name] = sh
	return sh, nil
}

// nodeKey memoizes a fragment's node count in one context: the enclosing
// connection's page size, the introspection ofType chain length, and
// whether it is spread in an edge.
type nodeKey struct {
	name  string
	page  int64
	chain int
	edge  bool
}

// nodes counts the objects an operation can return.
type nodes struct {
	schema *ast.Schema
	sizes  Sizes
	frags  map[string]*ast.FragmentDefinition
	op     *ast.OperationDefinition
	vars   map[string]any
	memo   map[nodeKey]int64 // -1: being counted (a cycle)
	wrap   int               // maxWrapping of the schema, -1 until an ofType needs it (wrapping)
}

// wrapping returns the most wrappers any type of the schema has, walking
// the schema the first time an operation's introspection asks for ofType:
// the other operations never need it.
func (n *nodes) wrapping() int {
	if n.wrap < 0 {
		n.wrap = maxWrapping(n.schema)
	}
	return n.wrap
}

// selectionSet returns the nodes under ss on type typ; page is the page size
// of the connection whose own selection set ss is (0 otherwise), chain the
// number of introspection ofType fields directly above, edge whether ss is
// an edge of a connection (whose node the edge already counted).
func (n *nodes) selectionSet(ss ast.SelectionSet, typ string, page int64, chain int, edge bool) int64 {
	var total int64
	for _, sel := range ss {
		switch x := sel.(type) {
		case *ast.Field:
			total = add(total, n.field(x, typ, page, chain, edge))
		case *ast.InlineFragment:
			t := typ
			if x.TypeCondition != "" {
				t = x.TypeCondition
			}
			total = add(total, n.selectionSet(x.SelectionSet, t, page, chain, edge))
		case *ast.FragmentSpread:
			total = add(total, n.fragment(x.Name, page, chain, edge))
		}
	}
	return total
}

func (n *nodes) fragment(name string, page int64, chain int, edge bool) int64 {
	k := nodeKey{name, page, chain, edge}
	if v, seen := n.memo[k]; seen {
		return max(v, 0)
	}
	f := n.frags[name]
	if f == nil {
		return 0
	}
	n.memo[k] = -1
	v := n.selectionSet(f.SelectionSet, f.TypeCondition, page, chain, edge)
	n.memo[k] = v
	return v
}

func (n *nodes) field(f *ast.Field, typ string, page int64, chain int, edge bool) int64 {
	if len(f.SelectionSet) == 0 {
		return 0 // a leaf
	}
	def := fieldDef(n.schema, typ, f.Name)
	if def == nil {
		return add(1, n.selectionSet(f.SelectionSet, "", 0, 0, false)) // unknown: validation refuses it
	}
	childChain := 0
	if f.Name == "ofType" && strings.HasPrefix(typ, "__") {
		if chain >= n.wrapping() {
			return 0 // no type is wrapped this deep: always null
		}
		childChain = chain + 1
	}
	items, self, childEdge := int64(1), int64(1), false
	paged := def.Arguments.ForName("first") != nil
	switch {
	case def.Type.Elem != nil && paged:
		items = n.first(f) // a list sized by its own first (topTopics): no connection
	case def.Type.Elem != nil:
		items = n.listSize(typ, f.Name, page)
		childEdge = page > 0 // a connection's edges
	case edge:
		self = 0 // an edge's node: the edge counted it
	}
	if w, ok := n.sizes.Weights[typ+"."+f.Name]; ok {
		self = w // work beyond the object itself (an upload's processing)
	}
	var childPage int64
	if paged && def.Type.Elem == nil {
		childPage = n.first(f)
	}
	return mul(items, add(self, n.selectionSet(f.SelectionSet, def.Type.Name(), childPage, childChain, childEdge)))
}

// listSize bounds the items of list field typ.name: the enclosing
// connection's page size, else Sizes.Lists, else Sizes.DefaultList.
func (n *nodes) listSize(typ, name string, page int64) int64 {
	if page > 0 {
		return page
	}
	if k, ok := n.sizes.Lists[typ+"."+name]; ok {
		return int64(k)
	}
	return int64(n.sizes.DefaultList)
}

// first returns a connection's page size: its `first` argument clamped to
// [0, MaxFirst], else its `last` argument (a connection paged backward),
// the larger of the two when both are given, or DefaultFirst.
func (n *nodes) first(f *ast.Field) int64 {
	v, ok := intArg(f, "first", n.op, n.vars)
	if l, okLast := intArg(f, "last", n.op, n.vars); okLast && (!ok || l > v) {
		v, ok = l, true
	}
	if !ok {
		return int64(n.sizes.DefaultFirst)
	}
	if m := int64(n.sizes.MaxFirst); m > 0 && v > m {
		v = m
	}
	return max(v, 0)
}

// maxWrapping returns the most wrappers (each non-null and each list counts
// one) any field, argument or input field type of schema has: how many
// ofType levels introspection can return before null.
func maxWrapping(schema *ast.Schema) int {
	w := 0
	for _, d := range schema.Types {
		for _, f := range d.Fields {
			w = max(w, wrappers(f.Type))
			for _, a := range f.Arguments {
				w = max(w, wrappers(a.Type))
			}
		}
	}
	for _, d := range schema.Directives {
		for _, a := range d.Arguments {
			w = max(w, wrappers(a.Type))
		}
	}
	return w
}

func wrappers(t *ast.Type) int {
	if t == nil {
		return 0
	}
	w := 0
	if t.NonNull {
		w++
	}
	if t.Elem != nil {
		w += 1 + wrappers(t.Elem)
	}
	return w
}

// IntrospectionSizes returns the sizes of the introspection lists of schema,
// for Sizes.Lists: each list counts its average length in this schema
// (rounded up), so that the canonical introspection query (types, their
// fields, their arguments) costs about the objects it returns.
func IntrospectionSizes(schema *ast.Schema) map[string]int {
	var types, fields, args, inputFields, enumValues, interfaces, possible int
	for _, d := range schema.Types {
		types++
		switch d.Kind {
		case ast.Object, ast.Interface:
			fields += len(d.Fields)
			for _, f := range d.Fields {
				args += len(f.Arguments)
			}
			interfaces += len(d.Interfaces)
		case ast.InputObject:
			inputFields += len(d.Fields)
		case ast.Enum:
			enumValues += len(d.EnumValues)
		}
		if d.IsAbstractType() {
			possible += len(schema.PossibleTypes[d.Name])
		}
	}
	var dirArgs int
	for _, d := range schema.Directives {
		dirArgs += len(d.Arguments)
	}
	avg := func(total, n int) int {
		if n == 0 || total == 0 {
			return 0
		}
		return (total + n - 1) / n
	}
	return map[string]int{
		"__Schema.types":       types,
		"__Schema.directives":  len(schema.Directives),
		"__Type.fields":        avg(fields, types),
		"__Type.inputFields":   avg(inputFields, types),
		"__Type.enumValues":    avg(enumValues, types),
		"__Type.interfaces":    avg(interfaces, types),
		"__Type.possibleTypes": avg(possible, types),
		"__Field.args":         avg(args, fields),
		"__Directive.args":     avg(dirArgs, len(schema.Directives)),
	}
}
