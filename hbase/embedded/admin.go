package embedded

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weibohbase/gateway/hbase"
)

// Table administration of the embedded backend: hbase.Admin. Every call
// holds ensureMu, writes the metadata it changes in one synced batch, and
// then publishes the new table catalog; data calls read the catalog without
// locks.

var (
	namespaceRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	qualifierRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

// validFamilyName follows HBase: non-empty, printable, no ':' and not
// starting with '.'. (It also keeps 0x00 out of family names, which the key
// decoding relies on.)
func validFamilyName(name string) bool {
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsRune(name, ':') {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] == 0x7f {
			return false
		}
	}
	return true
}

// EnsureTables creates namespace and the tables that do not exist yet,
// recording their specs (families, MaxVersions, TTL) in the store; see
// hbase.Admin. An existing table gains the families of its spec that it
// lacks, and its families' recorded read settings become the spec's
// (their MaxVersions and TTL stay). A disabled table is an error (it would
// never serve). SplitKeys, Bloom, InMemory, Encoding and BlockSize are
// recorded but have no effect. Names follow HBase: a namespace of [A-Za-z0-9_], a
// table qualifier of [A-Za-z0-9_.-] not starting with '.' or '-'.
func (s *Store) EnsureTables(ctx context.Context, namespace string, tables []hbase.TableSpec) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if !namespaceRE.MatchString(namespace) {
		return fmt.Errorf("hbase: invalid namespace name %q", namespace)
	}
	for _, ts := range tables {
		if !qualifierRE.MatchString(ts.Name) {
			return fmt.Errorf("hbase: invalid table name %q", ts.Name)
		}
		if len(ts.Families) == 0 {
			return fmt.Errorf("hbase: table %s:%s has no column family", namespace, ts.Name)
		}
		seen := map[string]bool{}
		for _, f := range ts.Families {
			if !validFamilyName(f.Name) {
				return fmt.Errorf("hbase: table %s:%s: invalid family name %q", namespace, ts.Name, f.Name)
			}
			if seen[f.Name] {
				return fmt.Errorf("hbase: table %s:%s: family %q given twice", namespace, ts.Name, f.Name)
			}
			seen[f.Name] = true
			if err := hbase.CheckFamily(namespace+":"+ts.Name, f); err != nil {
				return err
			}
		}
	}

	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	next := maps.Clone(*s.tables.Load())
	b := s.db.NewBatch()
	defer func() { _ = b.Close() }()
	nsKey := append(bytes.Clone(metaNamespacePfx), namespace...)
	if _, closer, err := s.db.Get(nsKey); errors.Is(err, pebble.ErrNotFound) {
		if err := b.Set(nsKey, []byte("{}"), nil); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else {
		_ = closer.Close()
	}
	nextID, err := s.nextTableID()
	if err != nil {
		return err
	}
	added := false // a family added to an existing table
	for _, ts := range tables {
		name := namespace + ":" + ts.Name
		if t := next[name]; t != nil {
			if t.meta.Disabled {
				return fmt.Errorf("%w: %s", errTableDisabled, name)
			}
			m, grew, changed := withSpecFamilies(t.meta, ts.Families)
			if !changed {
				continue
			}
			enc, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := b.Set(metaTableKey(name), enc, nil); err != nil {
				return err
			}
			next[name] = newEmbTable(name, m)
			added = added || grew
			continue
		}
		m := &embTableMeta{ID: nextID}
		nextID++
		for _, f := range ts.Families {
			m.Families = append(m.Families, familyMeta(f))
		}
		slices.SortFunc(m.Families, func(a, b embFamilyMeta) int { return cmp.Compare(a.Name, b.Name) })
		enc, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := b.Set(metaTableKey(name), enc, nil); err != nil {
			return err
		}
		next[name] = newEmbTable(name, m)
	}
	if b.Empty() {
		return nil
	}
	if err := b.Set(metaNextTableIDKey, binary.BigEndian.AppendUint32(nil, nextID), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	if added && s.rows != nil {
		// Cached reads of every family (a Get without Families) were read
		// with the old family list.
		s.rows.clear()
	}
	s.tables.Store(&next)
	return nil
}

// withSpecFamilies returns a copy of m with the families of specs that m
// lacks and the spec's read settings (Bloom, InMemory, Encoding,
// BlockSize, MOB) on the families it has, which keep their MaxVersions and
// TTL; grew reports an added family, changed any difference (m itself is
// returned when there is none).
func withSpecFamilies(m *embTableMeta, specs []hbase.FamilySpec) (_ *embTableMeta, grew, changed bool) {
	out := *m
	out.Families = slices.Clone(m.Families)
	for _, f := range specs {
		want := familyMeta(f)
		i := slices.IndexFunc(out.Families, func(e embFamilyMeta) bool { return e.Name == f.Name })
		if i < 0 {
			out.Families = append(out.Families, want)
			grew, changed = true, true
			continue
		}
		want.MaxVersions, want.TTLMillis = out.Families[i].MaxVersions, out.Families[i].TTLMillis
		if out.Families[i] != want {
			out.Families[i] = want
			changed = true
		}
	}
	if !changed {
		return m, false, false
	}
	slices.SortFunc(out.Families, func(a, b embFamilyMeta) int { return cmp.Compare(a.Name, b.Name) })
	return &out, grew, true
}

// familyMeta is the stored description of a family spec.
func familyMeta(f hbase.FamilySpec) embFamilyMeta {
	m := embFamilyMeta{
		Name:        f.Name,
		MaxVersions: max(1, f.MaxVersions),
		TTLMillis:   f.TTL.Milliseconds(),
		Bloom:       f.Bloom,
		InMemory:    f.InMemory,
		Encoding:    f.Encoding,
		BlockSize:   f.BlockSize,
		MOB:         f.MOB,
	}
	if f.MOB {
		m.MOBThreshold = f.MOBThreshold
	}
	return m
}

// nextTableID reads the next unused table id (ids start at 1).
func (s *Store) nextTableID() (uint32, error) {
	v, closer, err := s.db.Get(metaNextTableIDKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	defer func() { _ = closer.Close() }()
	if len(v) != 4 {
		return 0, errors.New("hbase: embedded store: bad next-table-id record")
	}
	return binary.BigEndian.Uint32(v), nil
}

// metaTableKey is the metadata key of table name ("ns:qualifier").
func metaTableKey(name string) []byte {
	return append(bytes.Clone(metaTablePfx), name...)
}

// DisableTable marks table ("ns:qualifier") disabled, in the store: data
// calls on it then fail (errTableDisabled) until DeleteTable removes it. An
// already disabled table is fine; a missing one gives hbase.ErrTableNotFound.
func (s *Store) DisableTable(ctx context.Context, table string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	cur := *s.tables.Load()
	t := cur[table]
	if t == nil {
		return fmt.Errorf("%w: %s", hbase.ErrTableNotFound, table)
	}
	if t.meta.Disabled {
		return nil
	}
	m := *t.meta
	m.Disabled = true
	enc, err := json.Marshal(&m)
	if err != nil {
		return err
	}
	if err := s.db.Set(metaTableKey(table), enc, pebble.Sync); err != nil {
		return err
	}
	next := maps.Clone(cur)
	next[table] = newEmbTable(table, &m)
	s.tables.Store(&next)
	return nil
}

// DeleteTable deletes table ("ns:qualifier") and every cell of it; see
// hbase.Admin. A missing table gives hbase.ErrTableNotFound. Calls on the
// table that are in flight may still complete; cells they write are never
// visible (the table's id is not reused) and go with the next compactions.
func (s *Store) DeleteTable(ctx context.Context, table string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	t := (*s.tables.Load())[table]
	if t == nil {
		return fmt.Errorf("%w: %s", hbase.ErrTableNotFound, table)
	}
	return s.dropTables([]*embTable{t}, nil)
}

// DropNamespace deletes every table of namespace with its cells, then the
// namespace; a missing namespace is fine. It refuses "", "default" and
// "hbase", as the HBase backend does.
func (s *Store) DropNamespace(ctx context.Context, namespace string) error {
	if namespace == "" || namespace == "default" || namespace == "hbase" {
		return fmt.Errorf("hbase: refusing to drop namespace %q", namespace)
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	nsKey := append(bytes.Clone(metaNamespacePfx), namespace...)
	_, closer, err := s.db.Get(nsKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_ = closer.Close()
	var drop []*embTable
	for name, t := range *s.tables.Load() {
		if strings.HasPrefix(name, namespace+":") {
			drop = append(drop, t)
		}
	}
	return s.dropTables(drop, nsKey)
}

// dropTables deletes tables (metadata and cells) and, when nsKey is not nil,
// that namespace record, in one synced batch, then publishes the catalog
// without them. The caller holds ensureMu.
func (s *Store) dropTables(tables []*embTable, nsKey []byte) error {
	b := s.db.NewBatch()
	defer func() { _ = b.Close() }()
	next := maps.Clone(*s.tables.Load())
	for _, t := range tables {
		if err := b.Delete(metaTableKey(t.name), nil); err != nil {
			return err
		}
		if err := b.DeleteRange(t.prefix, hbase.PrefixEnd(t.prefix), nil); err != nil {
			return err
		}
		delete(next, t.name)
	}
	if nsKey != nil {
		if err := b.Delete(nsKey, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	if s.rows != nil {
		s.rows.clear()
	}
	s.tables.Store(&next)
	return nil
}
