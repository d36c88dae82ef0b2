package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// This file holds HBase's snapshots, for backups (`gateway backup` and
// `gateway restore`): take, clone and delete. A snapshot is of one
// table; the snapshots of several tables are not one atomic cut.

// Tables returns the qualifiers of namespace's tables, sorted; none when
// the namespace does not exist.
func (s *Store) Tables(ctx context.Context, namespace string) ([]string, error) {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	exists, err := s.namespaceExists(ctx, namespace)
	if err != nil || !exists {
		return nil, err
	}
	tables, err := s.listTables(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []string
	for name := range tables {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// Snapshot takes the snapshot name of table (full name, "ns:qualifier"),
// flushing the table's memstores first so that the snapshot holds every
// write acknowledged before the call, and waits until it is complete.
// Snapshot names are letters, digits, '_', '-' and '.'; a name already
// taken fails (SnapshotExistsException). A snapshot the cluster fails
// (HBaseSnapshotException: a region server too busy to flush in time) is
// deleted and taken again, at most snapshotAttempts times in all.
// Without a deadline in ctx the admin timeout bounds the call.
func (s *Store) Snapshot(ctx context.Context, table, name string) error {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	var err error
	d := time.Second
	for range snapshotAttempts {
		if err = s.snapshot(ctx, table, name); err == nil || !errors.Is(err, errSnapshotFailed) {
			return err
		}
		if derr := s.DeleteSnapshot(ctx, name); derr != nil {
			return errors.Join(err, derr)
		}
		if d, err = backoff(ctx, d); err != nil {
			return fmt.Errorf("hbase: retrying snapshot %s of %s: %w", name, table, err)
		}
	}
	return err
}

// snapshotAttempts bounds the attempts of one Snapshot.
const snapshotAttempts = 3

// errSnapshotFailed marks a snapshot the cluster failed (its
// HBaseSnapshotException), which Snapshot takes again.
var errSnapshotFailed = errors.New("the cluster failed the snapshot")

// snapshot is one attempt of Snapshot.
func (s *Store) snapshot(ctx context.Context, table, name string) error {
	sn, err := hrpc.NewSnapshot(ctx, name, table)
	if err != nil {
		return err
	}
	if _, err := s.adminRPC.SendRPC(sn); err != nil {
		return mapError("snapshot "+name+" of", table, err)
	}
	d := 50 * time.Millisecond
	for {
		msg, err := s.adminRPC.SendRPC(hrpc.NewSnapshotDone(sn))
		if err != nil {
			if isJava(err, "HBaseSnapshotException") {
				return fmt.Errorf("%w: %w", errSnapshotFailed, mapError("wait for snapshot "+name+" of", table, err))
			}
			return mapError("wait for snapshot "+name+" of", table, err)
		}
		r, ok := msg.(*pb.IsSnapshotDoneResponse)
		if !ok {
			return fmt.Errorf("hbase: snapshot %s: unexpected response %T", name, msg)
		}
		if r.GetDone() {
			return nil
		}
		if d, err = backoff(ctx, d); err != nil {
			return fmt.Errorf("hbase: waiting for snapshot %s of %s: %w", name, table, err)
		}
	}
}

// CloneSnapshot creates table (full name, "ns:qualifier"; its namespace
// must exist, and an existing table is refused) from the snapshot name, and waits
// until the clone procedure has finished: the new table holds the
// snapshot's data and column families. HBase's master clones when the
// table named in a RestoreSnapshot request does not exist.
func (s *Store) CloneSnapshot(ctx context.Context, name, table string) error {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	// The same request restores over an existing (disabled) table: never
	// send it for one.
	ns, qual := splitTableName(table)
	existing, err := s.listTables(ctx, ns)
	if err != nil {
		return err
	}
	if existing[qual] {
		return fmt.Errorf("hbase: clone snapshot %s: table %s exists", name, table)
	}
	msg, err := s.master(ctx, "RestoreSnapshot", table,
		&pb.RestoreSnapshotRequest{Snapshot: &pb.SnapshotDescription{Name: proto.String(name), Table: proto.String(table)}},
		func() proto.Message { return &pb.RestoreSnapshotResponse{} })
	if err != nil {
		return mapError("clone snapshot "+name+" into", table, err)
	}
	if id, ok := procID(msg); ok {
		if err := s.waitProcedure(ctx, table, id); err != nil {
			return mapError("clone snapshot "+name+" into", table, err)
		}
	}
	return s.waitTableServing(ctx, table, nil)
}

// DeleteSnapshot deletes the snapshot name (its references; the files
// still used by tables stay); a missing one is fine.
func (s *Store) DeleteSnapshot(ctx context.Context, name string) error {
	ctx, cancel := withDefaultTimeout(ctx, s.cfg.adminTimeout)
	defer cancel()
	// HBase answers the deletion of a missing snapshot with an unrelated
	// error (an empty table qualifier): look first.
	exists, err := s.snapshotExists(ctx, name)
	if err != nil || !exists {
		return err
	}
	sn, err := hrpc.NewSnapshot(ctx, name, "")
	if err != nil {
		return err
	}
	_, err = s.adminRPC.SendRPC(hrpc.NewDeleteSnapshot(sn))
	if err != nil && !isJava(err, "SnapshotDoesNotExistException") {
		return mapError("delete snapshot "+name, "", err)
	}
	return nil
}

// snapshotExists reports whether the cluster has a completed snapshot name.
func (s *Store) snapshotExists(ctx context.Context, name string) (bool, error) {
	msg, err := s.adminRPC.SendRPC(hrpc.NewListSnapshots(ctx))
	if err != nil {
		return false, mapError("list snapshots", "", err)
	}
	r, ok := msg.(*pb.GetCompletedSnapshotsResponse)
	if !ok {
		return false, fmt.Errorf("hbase: list snapshots: unexpected response %T", msg)
	}
	for _, d := range r.GetSnapshots() {
		if d.GetName() == name {
			return true, nil
		}
	}
	return false, nil
}
