package remote

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/hbase"
)

// This file holds the backend's admin side, hbase.Admin: EnsureTables,
// DisableTable, DeleteTable and DropNamespace. gohbase's admin calls (hrpc.NewCreateTable,
// NewDisableTable, NewDeleteTable) hard-code the "default" namespace, so the
// master RPCs are built here as masterCall values and sent through the admin
// client's SendRPC, which routes every call of a gohbase admin client to the
// active master (found in ZooKeeper) and retries PleaseHoldException and
// ServerNotRunningYetException until the call's context ends.

// defaultNamespace is HBase's namespace of unqualified table names.
const defaultNamespace = "default"

var (
	adminMu      sync.Mutex
	adminClients = map[string]gohbase.RPCClient{}
)

// sharedAdmin returns the master client of zk, made once per quorum and
// effective user: gohbase's admin client cannot be closed (its Close panics),
// so stores share one instead of leaking one each.
func sharedAdmin(zk string, cfg config) (gohbase.RPCClient, error) {
	key := zk + "\x00" + cfg.effectiveUser
	adminMu.Lock()
	defer adminMu.Unlock()
	if c, ok := adminClients[key]; ok {
		return c, nil
	}
	ac := gohbase.NewAdminClient(zk, cfg.gohbaseOptions()...)
	c, ok := ac.(gohbase.RPCClient)
	if !ok {
		return nil, fmt.Errorf("hbase: gohbase admin client %T has no SendRPC", ac)
	}
	adminClients[key] = c
	return c, nil
}

// masterCall is one MasterService RPC: an hrpc.Call whose protobuf request
// and response are given, sent with the admin client's SendRPC.
type masterCall struct {
	ctx      context.Context
	method   string // MasterService method name, e.g. "CreateTable"
	table    []byte // for gohbase's tracing only: master calls are not routed by table
	req      proto.Message
	resp     func() proto.Message
	region   hrpc.RegionInfo
	resultch chan hrpc.RPCResult
}

func newMasterCall(ctx context.Context, method, table string, req proto.Message, resp func() proto.Message) *masterCall {
	return &masterCall{
		ctx:      ctx,
		method:   method,
		table:    []byte(table),
		req:      req,
		resp:     resp,
		resultch: make(chan hrpc.RPCResult, 1),
	}
}

// Table returns the table the call is about (used by gohbase for tracing).
func (c *masterCall) Table() []byte { return c.table }

// Name returns the MasterService method name.
func (c *masterCall) Name() string { return c.method }

// Description returns the method name (gohbase's metrics and tracing label).
func (c *masterCall) Description() string { return c.method }

// Key returns nil: master calls have no row.
func (c *masterCall) Key() []byte { return nil }

// Region returns the region gohbase assigned (the master's pseudo-region).
func (c *masterCall) Region() hrpc.RegionInfo { return c.region }

// SetRegion is called by gohbase when it routes the call.
func (c *masterCall) SetRegion(r hrpc.RegionInfo) { c.region = r }

// ToProto returns the request message.
func (c *masterCall) ToProto() proto.Message { return c.req }

// NewResponse returns an empty response message to decode the reply into.
func (c *masterCall) NewResponse() proto.Message { return c.resp() }

// ResultChan is where gohbase delivers the reply.
func (c *masterCall) ResultChan() chan hrpc.RPCResult { return c.resultch }

// Context returns the call's context.
func (c *masterCall) Context() context.Context { return c.ctx }

// master sends one master RPC and returns its response.
func (s *Store) master(ctx context.Context, method, table string, req proto.Message, resp func() proto.Message) (proto.Message, error) {
	return s.adminRPC.SendRPC(newMasterCall(ctx, method, table, req, resp))
}

// splitTableName splits "ns:name" (or "name", in the default namespace).
func splitTableName(table string) (ns, name string) {
	if i := strings.IndexByte(table, ':'); i >= 0 {
		return table[:i], table[i+1:]
	}
	return defaultNamespace, table
}

// fullTableName is the name data calls use: "ns:name", or "name" in the
// default namespace (hbase:meta keys default-namespace tables without prefix).
func fullTableName(ns, name string) string {
	if ns == "" || ns == defaultNamespace {
		return name
	}
	return ns + ":" + name
}

func pbTableName(table string) *pb.TableName {
	ns, name := splitTableName(table)
	return &pb.TableName{Namespace: []byte(ns), Qualifier: []byte(name)}
}

// javaError builds an error in the shape gohbase gives server exceptions, so
// that mapError and isJava treat procedure failures like RPC failures.
func javaError(class, msg string) error {
	return fmt.Errorf("HBase Java exception %s:\n%s: %s", class, class, msg)
}

// backoff sleeps d (or until ctx ends) and returns the next delay (×2, ≤ 1 s).
func backoff(ctx context.Context, d time.Duration) (time.Duration, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return d, ctx.Err()
	case <-t.C:
	}
	return min(2*d, time.Second), nil
}

// waitProcedure polls the master until procedure id has finished and returns
// its failure, if any. A procedure the master no longer knows counts as done.
func (s *Store) waitProcedure(ctx context.Context, table string, id uint64) error {
	d := 20 * time.Millisecond
	for {
		msg, err := s.adminRPC.SendRPC(hrpc.NewGetProcedureState(ctx, id))
		if err != nil {
			return err
		}
		r, ok := msg.(*pb.GetProcedureResultResponse)
		if !ok {
			return fmt.Errorf("hbase: procedure %d of %q: unexpected response %T", id, table, msg)
		}
		switch r.GetState() {
		case pb.GetProcedureResultResponse_NOT_FOUND:
			return nil
		case pb.GetProcedureResultResponse_FINISHED:
			if e := r.GetException(); e != nil {
				ge := e.GetGenericException()
				return javaError(ge.GetClassName(), ge.GetMessage())
			}
			return nil
		}
		if d, err = backoff(ctx, d); err != nil {
			return err
		}
	}
}

// EnsureTables creates namespace (unless it is "" or "default") and every
// table of tables that does not exist yet, then waits until each table's
// regions serve reads. Column families get VERSIONS = MaxVersions (min 1),
// TTL in whole seconds (rounded up; 0 = forever), BLOOMFILTER = Bloom
// (default ROW), IN_MEMORY and NEW_VERSION_BEHAVIOR = true (see
// hbase.Delete). An existing table gains the families of its spec that it
// lacks (one AddColumn per family, waited for); its families keep their
// settings, except that every family without NEW_VERSION_BEHAVIOR = true is
// altered to have it (one ModifyColumn per family, waited for). Either alter
// makes HBase reopen the table's regions, each unavailable for a moment. Concurrent EnsureTables
// of the same tables are safe (NamespaceExistException and
// TableExistsException count as success; the alters are idempotent).
// Without a deadline in ctx, DefaultAdminTimeout (or WithAdminTimeout) bounds
// the call.
func (s *Store) EnsureTables(ctx context.Context, namespace string, tables []hbase.TableSpec) error {
	namespace = cmp.Or(namespace, defaultNamespace)
	for _, t := range tables {
		if err := validateTableSpec(t); err != nil {
			return err
		}
	}
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	if namespace != defaultNamespace {
		if err := s.ensureNamespace(ctx, namespace); err != nil {
			return err
		}
	}
	existing, err := s.listTables(ctx, namespace)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if existing[t.Name] {
			continue
		}
		if err := s.createTable(ctx, namespace, t); err != nil {
			return err
		}
	}
	// Every table now exists, created here, by a concurrent caller or long
	// ago (perhaps before some of its families were specified, or before
	// the gateway set NEW_VERSION_BEHAVIOR): add the families it lacks,
	// then give each family that lacks it the setting.
	if err := s.ensureFamilies(ctx, namespace, tables); err != nil {
		return err
	}
	if _, err := s.ensureSettings(ctx, namespace, tables); err != nil {
		return err
	}
	for _, t := range tables {
		if err := s.waitTableServing(ctx, fullTableName(namespace, t.Name), t.SplitKeys); err != nil {
			return err
		}
	}
	return nil
}

func validateTableSpec(t hbase.TableSpec) error {
	if t.Name == "" || strings.ContainsRune(t.Name, ':') {
		return fmt.Errorf("hbase: invalid table name %q (no namespace, no ':')", t.Name)
	}
	if len(t.Families) == 0 {
		return fmt.Errorf("hbase: table %q has no column family", t.Name)
	}
	for _, f := range t.Families {
		if f.Name == "" {
			return fmt.Errorf("hbase: table %q: empty column family name", t.Name)
		}
		if err := hbase.CheckFamily(t.Name, f); err != nil {
			return err
		}
	}
	return nil
}

// ensureNamespace creates ns if needed and waits until the master knows it.
func (s *Store) ensureNamespace(ctx context.Context, ns string) error {
	exists, err := s.namespaceExists(ctx, ns)
	if err != nil || exists {
		return err
	}
	_, err = s.master(ctx, "CreateNamespace", ns,
		&pb.CreateNamespaceRequest{NamespaceDescriptor: &pb.NamespaceDescriptor{Name: []byte(ns)}},
		func() proto.Message { return &pb.CreateNamespaceResponse{} })
	if err != nil && !isJava(err, "NamespaceExistException") {
		return mapError("create namespace", ns, err)
	}
	// HBase answers before the namespace procedure is done.
	d := 20 * time.Millisecond
	for {
		exists, err := s.namespaceExists(ctx, ns)
		if err != nil || exists {
			return err
		}
		if d, err = backoff(ctx, d); err != nil {
			return fmt.Errorf("hbase: waiting for namespace %q: %w", ns, err)
		}
	}
}

func (s *Store) namespaceExists(ctx context.Context, ns string) (bool, error) {
	_, err := s.master(ctx, "GetNamespaceDescriptor", ns,
		&pb.GetNamespaceDescriptorRequest{NamespaceName: new(ns)},
		func() proto.Message { return &pb.GetNamespaceDescriptorResponse{} })
	switch {
	case err == nil:
		return true, nil
	case isJava(err, "NamespaceNotFoundException"):
		return false, nil
	default:
		return false, mapError("get namespace", ns, err)
	}
}

// listTables returns the qualifiers of ns's tables.
func (s *Store) listTables(ctx context.Context, ns string) (map[string]bool, error) {
	msg, err := s.master(ctx, "ListTableNamesByNamespace", ns,
		&pb.ListTableNamesByNamespaceRequest{NamespaceName: new(ns)},
		func() proto.Message { return &pb.ListTableNamesByNamespaceResponse{} })
	if err != nil {
		return nil, mapError("list tables of namespace", ns, err)
	}
	r, ok := msg.(*pb.ListTableNamesByNamespaceResponse)
	if !ok {
		return nil, fmt.Errorf("hbase: list tables of %q: unexpected response %T", ns, msg)
	}
	out := make(map[string]bool, len(r.GetTableName()))
	for _, tn := range r.GetTableName() {
		out[string(tn.GetQualifier())] = true
	}
	return out, nil
}

// familySchema is the column family descriptor of f, as HBase's attributes.
func familySchema(f hbase.FamilySpec) *pb.ColumnFamilySchema {
	versions := max(f.MaxVersions, 1)
	ttl := "2147483647" // HConstants.FOREVER
	if f.TTL > 0 {
		ttl = strconv.FormatInt(int64((f.TTL+time.Second-1)/time.Second), 10)
	}
	attrs := append([][2]string{
		{"VERSIONS", strconv.Itoa(versions)},
		{"TTL", ttl},
	}, readSettings(f)...)
	cf := &pb.ColumnFamilySchema{Name: []byte(f.Name)}
	for _, a := range attrs {
		setAttr(cf, a[0], a[1])
	}
	return cf
}

// attrNewVersionBehavior is the column family attribute of HBASE-15968
// (HBase >= 2.0): with it "true", a delete marker masks only the cells
// written before it (HBase compares mvcc as well as timestamps), and a
// version pushed out by newer ones, or deleted, stays gone, whether or not a
// major compaction has run. Without it a delete masks every put of a
// timestamp <= its own, even one written after it, until a major compaction.
const attrNewVersionBehavior = "NEW_VERSION_BEHAVIOR"

// tableSchemas reads the descriptors of the named tables of ns from the
// master (GetTableDescriptors, which gohbase has no call for), by qualifier;
// a table that does not exist is absent from the map.
func (s *Store) tableSchemas(ctx context.Context, ns string, names []string) (map[string]*pb.TableSchema, error) {
	req := &pb.GetTableDescriptorsRequest{}
	for _, n := range names {
		req.TableNames = append(req.TableNames, &pb.TableName{Namespace: []byte(ns), Qualifier: []byte(n)})
	}
	msg, err := s.master(ctx, "GetTableDescriptors", ns, req,
		func() proto.Message { return &pb.GetTableDescriptorsResponse{} })
	if err != nil {
		return nil, mapError("get table descriptors of namespace", ns, err)
	}
	r, ok := msg.(*pb.GetTableDescriptorsResponse)
	if !ok {
		return nil, fmt.Errorf("hbase: get table descriptors of %q: unexpected response %T", ns, msg)
	}
	out := make(map[string]*pb.TableSchema, len(r.GetTableSchema()))
	for _, ts := range r.GetTableSchema() {
		if string(ts.GetTableName().GetNamespace()) == ns {
			out[string(ts.GetTableName().GetQualifier())] = ts
		}
	}
	return out, nil
}

// ensureFamilies adds to each of the given tables of ns the families of its
// spec that its descriptor lacks, one AddColumn per family (with the
// attributes of familySchema), and waits for each. Families it has keep
// their settings. A table missing from the descriptors fails with
// ErrTableNotFound.
func (s *Store) ensureFamilies(ctx context.Context, ns string, tables []hbase.TableSpec) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	schemas, err := s.tableSchemas(ctx, ns, names)
	if err != nil {
		return err
	}
	for _, t := range tables {
		schema := schemas[t.Name]
		if schema == nil {
			return fmt.Errorf("%w: %s (no descriptor after create)", hbase.ErrTableNotFound, fullTableName(ns, t.Name))
		}
		for _, f := range t.Families {
			if slices.ContainsFunc(schema.GetColumnFamilies(), func(cf *pb.ColumnFamilySchema) bool { return string(cf.GetName()) == f.Name }) {
				continue
			}
			s.cfg.log().WarnContext(ctx, "hbase: adding a column family to an existing table; HBase reopens the table's regions",
				"table", fullTableName(ns, t.Name), "family", f.Name)
			if err := s.addColumn(ctx, ns, t.Name, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// addColumn adds family f to ns:name and waits until the alter is done (the
// procedure has finished; from a master that returns no procedure id, until
// the descriptor shows the family). A family that exists by then (a
// concurrent `gateway migrate` added it: InvalidFamilyOperationException)
// is success; a concurrent alter of the table (ConcurrentTableModificationException)
// makes it look again and retry.
func (s *Store) addColumn(ctx context.Context, ns, name string, f hbase.FamilySpec) error {
	table := fullTableName(ns, name)
	op := fmt.Sprintf("add family %q to", f.Name)
	d := 20 * time.Millisecond
	for {
		msg, err := s.master(ctx, "AddColumn", table,
			&pb.AddColumnRequest{TableName: pbTableName(table), ColumnFamilies: familySchema(f)},
			func() proto.Message { return &pb.AddColumnResponse{} })
		if err == nil {
			id, ok := procID(msg)
			if !ok {
				return s.waitFamily(ctx, ns, name, f.Name)
			}
			err = s.waitProcedure(ctx, table, id)
		}
		switch {
		case err == nil:
			return nil
		case isJava(err, "InvalidFamilyOperationException"):
			return s.waitFamily(ctx, ns, name, f.Name)
		case !isJava(err, "ConcurrentTableModificationException"):
			return mapError(op, table, err)
		}
		if d, err = backoff(ctx, d); err != nil {
			return mapError(op, table, err)
		}
		if _, err := s.familyDescriptor(ctx, ns, name, []byte(f.Name)); err == nil {
			return s.waitFamily(ctx, ns, name, f.Name) // the concurrent alter added it
		}
	}
}

// waitFamily polls the descriptor of ns:name until it has family.
func (s *Store) waitFamily(ctx context.Context, ns, name, family string) error {
	d := 20 * time.Millisecond
	for {
		_, err := s.familyDescriptor(ctx, ns, name, []byte(family))
		if err == nil {
			return nil
		}
		if !errors.Is(err, hbase.ErrFamilyNotFound) {
			return err
		}
		if d, err = backoff(ctx, d); err != nil {
			return mapError(fmt.Sprintf("wait for family %q of", family), fullTableName(ns, name), err)
		}
	}
}

// familyDescriptor returns the current descriptor of family of ns:name.
func (s *Store) familyDescriptor(ctx context.Context, ns, name string, family []byte) (*pb.ColumnFamilySchema, error) {
	schemas, err := s.tableSchemas(ctx, ns, []string{name})
	if err != nil {
		return nil, err
	}
	if schemas[name] == nil {
		return nil, fmt.Errorf("%w: %s", hbase.ErrTableNotFound, fullTableName(ns, name))
	}
	for _, cf := range schemas[name].GetColumnFamilies() {
		if bytes.Equal(cf.GetName(), family) {
			return cf, nil
		}
	}
	return nil, fmt.Errorf("%w: %q in table %s", hbase.ErrFamilyNotFound, family, fullTableName(ns, name))
}

// procID reads field 1 (proc_id, uint64) of a master response whose
// message in gohbase's protos predates the field (ModifyColumnResponse):
// protobuf keeps it among the message's unknown fields.
func procID(msg proto.Message) (uint64, bool) {
	b := msg.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, false
		}
		b = b[n:]
		if num == 1 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			return v, n >= 0
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, false
		}
		b = b[n:]
	}
	return 0, false
}

// splitKeys returns keys sorted, without empty keys and duplicates.
func splitKeys(keys [][]byte) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if len(k) > 0 {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return slices.CompactFunc(out, bytes.Equal)
}

// createTable creates ns:t.Name and waits for the create procedure.
func (s *Store) createTable(ctx context.Context, ns string, t hbase.TableSpec) error {
	full := fullTableName(ns, t.Name)
	schema := &pb.TableSchema{TableName: &pb.TableName{Namespace: []byte(ns), Qualifier: []byte(t.Name)}}
	for _, f := range t.Families {
		schema.ColumnFamilies = append(schema.ColumnFamilies, familySchema(f))
	}
	msg, err := s.master(ctx, "CreateTable", full,
		&pb.CreateTableRequest{TableSchema: schema, SplitKeys: splitKeys(t.SplitKeys)},
		func() proto.Message { return &pb.CreateTableResponse{} })
	if err == nil {
		r, ok := msg.(*pb.CreateTableResponse)
		if !ok {
			return fmt.Errorf("hbase: create table %q: unexpected response %T", full, msg)
		}
		err = s.waitProcedure(ctx, full, r.GetProcId())
	}
	if err != nil && !isJava(err, "TableExistsException") {
		return mapError("create table", full, err)
	}
	return nil
}

// waitTableServing reads a row in every region of table (one region per
// split key, plus the first) until all of them answer.
func (s *Store) waitTableServing(ctx context.Context, table string, splits [][]byte) error {
	starts := append([][]byte{nil}, splitKeys(splits)...)
	for _, start := range starts {
		probe := append(bytes.Clone(start), 0) // a row of that region, unlikely to exist
		d := 20 * time.Millisecond
		for {
			get, err := hrpc.NewGet(ctx, []byte(table), probe, hrpc.SkipBatch())
			if err != nil {
				return err
			}
			get.ExistsOnly()
			_, err = s.conn().client.Get(get)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return mapError("wait for table", table, err)
			}
			if d, err = backoff(ctx, d); err != nil {
				return mapError("wait for table", table, err)
			}
		}
	}
	return nil
}

// DisableTable disables table ("ns:name"; "name" means the default
// namespace) and waits until it is disabled; an already disabled table is
// fine. A missing table gives hbase.ErrTableNotFound. Data calls on a
// disabled table fail when their deadline (or the call timeout) ends:
// gohbase retries them as for a region in transition.
func (s *Store) DisableTable(ctx context.Context, table string) error {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	msg, err := s.master(ctx, "DisableTable", table,
		&pb.DisableTableRequest{TableName: pbTableName(table)},
		func() proto.Message { return &pb.DisableTableResponse{} })
	if err == nil {
		r, ok := msg.(*pb.DisableTableResponse)
		if !ok {
			return fmt.Errorf("hbase: disable table %q: unexpected response %T", table, msg)
		}
		err = s.waitProcedure(ctx, table, r.GetProcId())
	}
	if err != nil && !isJava(err, "TableNotEnabledException") {
		return mapError("disable table", table, err)
	}
	return nil
}

// DeleteTable disables (if needed) and deletes table ("ns:name"; "name" means
// the default namespace) with all its data, and waits until it is gone. A
// missing table gives hbase.ErrTableNotFound.
func (s *Store) DeleteTable(ctx context.Context, table string) error {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	if err := s.DisableTable(ctx, table); err != nil {
		return err
	}
	msg, err := s.master(ctx, "DeleteTable", table,
		&pb.DeleteTableRequest{TableName: pbTableName(table)},
		func() proto.Message { return &pb.DeleteTableResponse{} })
	if err == nil {
		r, ok := msg.(*pb.DeleteTableResponse)
		if !ok {
			return fmt.Errorf("hbase: delete table %q: unexpected response %T", table, msg)
		}
		err = s.waitProcedure(ctx, table, r.GetProcId())
	}
	return mapError("delete table", table, err)
}

// DropNamespace deletes every table of namespace and then the namespace
// itself, and waits until it is gone; a missing namespace is fine. It refuses
// "", "default" and "hbase". It is destructive and meant for tests that
// create a namespace of their own.
func (s *Store) DropNamespace(ctx context.Context, namespace string) error {
	if namespace == "" || namespace == defaultNamespace || namespace == "hbase" {
		return fmt.Errorf("hbase: refusing to drop namespace %q", namespace)
	}
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	exists, err := s.namespaceExists(ctx, namespace)
	if err != nil || !exists {
		return err
	}
	tables, err := s.listTables(ctx, namespace)
	if err != nil {
		return err
	}
	for name := range tables {
		if err := s.DeleteTable(ctx, fullTableName(namespace, name)); err != nil && !errors.Is(err, hbase.ErrTableNotFound) {
			return err
		}
	}
	_, err = s.master(ctx, "DeleteNamespace", namespace,
		&pb.DeleteNamespaceRequest{NamespaceName: new(namespace)},
		func() proto.Message { return &pb.DeleteNamespaceResponse{} })
	if err != nil && !isJava(err, "NamespaceNotFoundException") {
		return mapError("delete namespace", namespace, err)
	}
	d := 20 * time.Millisecond
	for {
		exists, err := s.namespaceExists(ctx, namespace)
		if err != nil || !exists {
			return err
		}
		if d, err = backoff(ctx, d); err != nil {
			return fmt.Errorf("hbase: waiting for namespace %q to go: %w", namespace, err)
		}
	}
}
