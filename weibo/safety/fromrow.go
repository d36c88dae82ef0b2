package safety

import (
	"hash/maphash"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// FromRowPage is FromRow for a read of many posts (a home page): the same
// Set, with its filters' decoding and compiling (folding each phrase)
// remembered by the filters cell's bytes, so that the pages of a viewer
// whose filters have not changed pay for them once. Bounded: at most
// compiledEntries filter cells, none over compiledMaxCell bytes.
func FromRowPage(owner weibo.UserID, r *hbase.Result, now int64) *Set {
	c := r.Cell(tables.FamSafetySet, tables.ColFilters)
	if c == nil || len(c.Value) > compiledMaxCell {
		return FromRow(owner, r, now)
	}
	all, ok := compiled.get(c.Value)
	rest := &hbase.Result{Row: r.Row, Cells: make([]*hbase.Cell, 0, len(r.Cells))}
	for _, x := range r.Cells {
		if x != c {
			rest.Cells = append(rest.Cells, x)
		}
	}
	s := FromRow(owner, rest, now)
	if !ok {
		fs, _ := tables.DecodeFilters(c.Value)
		all = make([]filter, len(fs))
		for i, f := range fs {
			all[i] = compile(f)
		}
		compiled.put(c.Value, all)
	}
	s.filters = all // shared: a Set never changes its filters
	for i := range all {
		if all[i].Expires != 0 && all[i].Expires <= now {
			s.filters = nil
			for _, f := range all {
				if f.Expires == 0 || f.Expires > now {
					s.filters = append(s.filters, f)
				}
			}
			break
		}
	}
	return s
}

const (
	compiledEntries = 4096
	compiledMaxCell = 16 << 10
)

// compiled remembers compiled filter cells by their bytes.
var compiled = &filterCache{seed: maphash.MakeSeed()}

type filterCache struct {
	seed maphash.Seed
	mu   sync.Mutex
	lru  *simplelru.LRU[uint64, compiledCell]
}

type compiledCell struct {
	cell    string
	filters []filter
}

func (c *filterCache) get(cell []byte) ([]filter, bool) {
	h := maphash.Bytes(c.seed, cell)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		return nil, false
	}
	if e, ok := c.lru.Get(h); ok && e.cell == string(cell) {
		return e.filters, true
	}
	return nil, false
}

func (c *filterCache) put(cell []byte, fs []filter) {
	h := maphash.Bytes(c.seed, cell)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		c.lru, _ = simplelru.NewLRU[uint64, compiledCell](compiledEntries, nil)
	}
	c.lru.Add(h, compiledCell{cell: string(cell), filters: fs})
}
