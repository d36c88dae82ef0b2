package gqlfield

import (
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// CollectFields is graphql.CollectFields (the fields of selection set sel
// on an object satisfying the type conditions satisfies) with a cache
// shared by all operations. `make generate` points the generated object
// marshallers at it.
//
// gqlgen caches collected fields per operation under a key it builds on
// every call, for every object of the response, with reflection and an FNV
// hash of satisfies, allocating as it goes. Here the key is the identity of
// sel's and satisfies' arrays, and an entry is kept only when its fields
// cannot depend on the operation: no directive (@skip, @include, @defer,
// whose arguments may be variables) on any selection collectFields looks
// at, through inline fragments and fragment spreads. A selection set belongs to
// one parsed document, whose fragments it names, and the entry's key
// points into both arrays, so neither is freed and reused for another
// selection while the entry exists. The entries pin their documents: the
// cache is emptied when the documents' source sizes (one per entry) add up
// to more than maxCollectedSource bytes, and keeps nothing of a document
// longer than maxCollectedQuery.
func CollectFields(oc *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {
	if len(sel) == 0 {
		return graphql.CollectFields(oc, sel, satisfies)
	}
	key := newCollectKey(sel, satisfies)
	if fields, ok := lookup(&fieldsCache, fieldsCache.m, key); ok {
		return fields
	}
	fields := graphql.CollectFields(oc, sel, satisfies)
	if oc.Doc != nil && len(oc.RawQuery) <= maxCollectedQuery && static(oc.Doc, sel) {
		store(&fieldsCache, fieldsCache.m, key, fields, len(oc.RawQuery))
	}
	return fields
}

// maxCollectedSource bounds the source bytes of the documents the cache
// keeps alive (counted once per entry), as the gateway's parsed-document
// cache is bounded (server.New: 1 MiB); maxCollectedQuery is the longest
// document cached, the longest that cache keeps (a longer one is parsed
// anew for each operation, so its selection sets never come back).
const (
	maxCollectedSource = 1 << 20
	maxCollectedQuery  = 16 << 10
)

// newCollectKey is the key of sel (not empty) and satisfies.
func newCollectKey(sel ast.SelectionSet, satisfies []string) collectKey {
	key := collectKey{sel: &sel[0], n: len(sel), sat: nil, satN: len(satisfies)}
	if len(satisfies) > 0 {
		key.sat = &satisfies[0]
	}
	return key
}

// collectKey identifies a selection set and a satisfies list by their
// arrays (pointers to their first elements) and lengths.
type collectKey struct {
	sel  *ast.Selection
	n    int
	sat  *string
	satN int
}

// fieldsCache is CollectFields' cache.
var fieldsCache = collectCache{m: map[collectKey][]graphql.CollectedField{}, plain: map[collectKey]bool{}}

// collectCache maps selection sets to their collected fields, and to
// whether they are plain (IsPlain).
type collectCache struct {
	mu     sync.RWMutex
	m      map[collectKey][]graphql.CollectedField
	plain  map[collectKey]bool
	source int // the source bytes counted for the entries of both maps
}

// lookup returns the entry of key in m, one of c's maps.
func lookup[V any](c *collectCache, m map[collectKey]V, key collectKey) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := m[key]
	return v, ok
}

// store caches v under key in m, one of c's maps, unless it holds key,
// counting source bytes; it first empties the cache when they would take
// it over maxCollectedSource.
func store[V any](c *collectCache, m map[collectKey]V, key collectKey, v V, source int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := m[key]; ok {
		return
	}
	c.make(source)
	m[key] = v
}

// make makes room for an entry of source bytes, emptying both maps when
// they would hold more than maxCollectedSource; c.mu is held.
func (c *collectCache) make(source int) {
	if c.source+source > maxCollectedSource {
		clear(c.m)
		clear(c.plain)
		c.source = 0
	}
	c.source += source
}

// static reports whether collecting sel's fields reads no directive: no
// field, inline fragment or fragment spread collectFields looks at has
// one, nor has a fragment definition it expands (each once, as
// collectFields expands it).
func static(doc *ast.QueryDocument, sel ast.SelectionSet) bool {
	var visited map[string]bool
	var walk func(ast.SelectionSet) bool
	walk = func(sel ast.SelectionSet) bool {
		for _, s := range sel {
			switch s := s.(type) {
			case *ast.Field:
				if len(s.Directives) > 0 {
					return false
				}
			case *ast.InlineFragment:
				if len(s.Directives) > 0 || !walk(s.SelectionSet) {
					return false
				}
			case *ast.FragmentSpread:
				if len(s.Directives) > 0 {
					return false
				}
				if visited[s.Name] {
					continue
				}
				if visited == nil {
					visited = map[string]bool{}
				}
				visited[s.Name] = true
				f := doc.Fragments.ForName(s.Name)
				if f == nil || len(f.Directives) > 0 || !walk(f.SelectionSet) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	return walk(sel)
}
