package remote

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/hbase"
)

// The read settings of column families (Bloom filter, IN_MEMORY, data
// block encoding, block size, NEW_VERSION_BEHAVIOR, MOB) and the alter that
// brings an existing family to them.

// readSettings are the attributes of family spec f that EnsureTables
// brings an existing family to (with NEW_VERSION_BEHAVIOR): how HBase
// stores and caches its blocks, and whether its large values are MOB.
func readSettings(f hbase.FamilySpec) [][2]string {
	return [][2]string{
		{"BLOOMFILTER", cmp.Or(f.Bloom, hbase.BloomRow)},
		{"IN_MEMORY", strconv.FormatBool(f.InMemory)},
		{"DATA_BLOCK_ENCODING", cmp.Or(f.Encoding, hbase.EncodingNone)},
		{"BLOCKSIZE", strconv.Itoa(cmp.Or(f.BlockSize, hbase.DefaultBlockSize))},
		{attrNewVersionBehavior, "true"},
		{"IS_MOB", strconv.FormatBool(f.MOB)},
		{"MOB_THRESHOLD", strconv.Itoa(mobThreshold(f))},
	}
}

// mobThreshold is the MOB_THRESHOLD attribute of f: its MOBThreshold, or
// HBase's default when f is not a MOB family or names none (so that a
// family without MOB keeps HBase's own value and is never altered for it).
func mobThreshold(f hbase.FamilySpec) int {
	if !f.MOB || f.MOBThreshold == 0 {
		return hbase.DefaultMOBThreshold
	}
	return f.MOBThreshold
}

// attrDefaults are HBase's values of the read settings' attributes when a
// descriptor does not list them.
var attrDefaults = map[string]string{
	"BLOOMFILTER": hbase.BloomRow, "IN_MEMORY": "false", "DATA_BLOCK_ENCODING": hbase.EncodingNone,
	"BLOCKSIZE": strconv.Itoa(hbase.DefaultBlockSize), attrNewVersionBehavior: "false",
	"IS_MOB": "false", "MOB_THRESHOLD": strconv.Itoa(hbase.DefaultMOBThreshold),
}

// attr returns cf's attribute key, or HBase's default when cf does not
// list it.
func attr(cf *pb.ColumnFamilySchema, key string) string {
	for _, a := range cf.GetAttributes() {
		if string(a.GetFirst()) == key {
			return string(a.GetSecond())
		}
	}
	return attrDefaults[key]
}

// setAttr sets attribute key of cf to v, keeping the others.
func setAttr(cf *pb.ColumnFamilySchema, key, v string) {
	for _, a := range cf.Attributes {
		if string(a.GetFirst()) == key {
			a.Second = []byte(v)
			return
		}
	}
	cf.Attributes = append(cf.Attributes, &pb.BytesBytesPair{First: []byte(key), Second: []byte(v)})
}

// ensureSettings alters every family of the given tables of ns whose
// descriptor lacks its spec's read settings (readSettings: Bloom filter,
// IN_MEMORY, data block encoding, block size, NEW_VERSION_BEHAVIOR = true;
// a family the spec does not list, only the last), one ModifyColumn per
// family (which keeps the family's other attributes and configuration),
// waits for each alter to finish and returns how many families it
// altered. Families that have them are not touched, so a second call sends
// nothing. A table missing from the descriptors fails with
// ErrTableNotFound.
func (s *Store) ensureSettings(ctx context.Context, ns string, tables []hbase.TableSpec) (int, error) {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	schemas, err := s.tableSchemas(ctx, ns, names)
	if err != nil {
		return 0, err
	}
	altered := 0
	for _, t := range tables {
		full := fullTableName(ns, t.Name)
		schema := schemas[t.Name]
		if schema == nil {
			return altered, fmt.Errorf("%w: %s (no descriptor after create)", hbase.ErrTableNotFound, full)
		}
		for _, cf := range schema.GetColumnFamilies() {
			want := [][2]string{{attrNewVersionBehavior, "true"}}
			if i := slices.IndexFunc(t.Families, func(f hbase.FamilySpec) bool { return f.Name == string(cf.GetName()) }); i >= 0 {
				want = readSettings(t.Families[i])
			}
			if has(cf, want) {
				continue
			}
			s.cfg.log().WarnContext(ctx, "hbase: altering a column family's settings; HBase reopens the table's regions",
				"table", full, "family", string(cf.GetName()), "settings", fmt.Sprint(want))
			if err := s.modifyColumn(ctx, ns, t.Name, cf.GetName(), want); err != nil {
				return altered, err
			}
			altered++
		}
	}
	return altered, nil
}

// has reports whether cf has the attributes want (HBase parses booleans
// case-insensitively; an attribute cf does not list has HBase's default).
func has(cf *pb.ColumnFamilySchema, want [][2]string) bool {
	for _, a := range want {
		if !strings.EqualFold(attr(cf, a[0]), a[1]) {
			return false
		}
	}
	return true
}

// modifyColumn gives family of ns:name the attributes want: it reads the
// family's current descriptor, sends it with them through ModifyColumn and
// waits until the alter is done (the procedure has finished: HBase has
// reopened the table's regions with the new descriptor; from a master that
// returns no procedure id, until the descriptor shows them). When a
// concurrent alter of the table makes HBase refuse it
// (ConcurrentTableModificationException: two `gateway migrate` at once),
// it starts over from the descriptor as that alter left it, and sends its
// alter even if the family has the attributes by then: the table's
// procedures run one at a time, so its own finishing means the other one
// has finished too.
func (s *Store) modifyColumn(ctx context.Context, ns, name string, family []byte, want [][2]string) error {
	table := fullTableName(ns, name)
	op := fmt.Sprintf("alter family %q of", family)
	d := 20 * time.Millisecond
	for {
		cf, err := s.familyDescriptor(ctx, ns, name, family)
		if err != nil {
			return err
		}
		for _, a := range want {
			setAttr(cf, a[0], a[1])
		}
		msg, err := s.master(ctx, "ModifyColumn", table,
			&pb.ModifyColumnRequest{TableName: pbTableName(table), ColumnFamilies: cf},
			func() proto.Message { return &pb.ModifyColumnResponse{} })
		if err == nil {
			id, ok := procID(msg)
			if !ok {
				return s.waitAttrs(ctx, ns, name, family, want)
			}
			err = s.waitProcedure(ctx, table, id)
		}
		if err == nil || !isJava(err, "ConcurrentTableModificationException") {
			return mapError(op, table, err)
		}
		if d, err = backoff(ctx, d); err != nil {
			return mapError(op, table, err)
		}
	}
}

// waitAttrs polls the descriptor of ns:name until family has the
// attributes want.
func (s *Store) waitAttrs(ctx context.Context, ns, name string, family []byte, want [][2]string) error {
	d := 20 * time.Millisecond
	for {
		cf, err := s.familyDescriptor(ctx, ns, name, family)
		if err != nil || has(cf, want) {
			return err
		}
		if d, err = backoff(ctx, d); err != nil {
			return mapError(fmt.Sprintf("wait for the alter of family %q of", family), fullTableName(ns, name), err)
		}
	}
}
