package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/weibo/domain"
)

// backupCmd runs `gateway backup --to DIR [store flags]` (docs/operations.md,
// "Backup and restore"). On the embedded store it writes a pebble
// checkpoint of --data into DIR: through the admin socket of the gateway
// serving --data when one runs (pebble locks the directory), else by
// opening the store itself; the JWT secret file of --data comes along. On
// HBase it snapshots every table of --namespace and exports the snapshots
// into DIR with HBase's ExportSnapshot (backupHBase). DIR must not exist or
// be empty.
func backupCmd(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	var hf hbaseToolFlags
	hf.register(fs)
	to := fs.String("to", "", "local directory to write the backup into; must not exist or be empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *to == "" || fs.NArg() > 0 {
		return errors.New("usage: gateway backup --to DIR [store flags]")
	}
	start := time.Now()
	switch sf.kind {
	case hbase.BackendEmbedded:
		dir, err := filepath.Abs(*to)
		if err != nil {
			return err
		}
		how, err := backupEmbedded(ctx, sf.data, dir)
		if err != nil {
			return err
		}
		log.Info("backup done", "store", sf.kind, "data", sf.data, "to", dir, "via", how, "elapsed", time.Since(start).Round(time.Millisecond))
		return nil
	case hbase.BackendHBase:
		return backupHBase(ctx, log, sf, hf, *to)
	default:
		return fmt.Errorf("unknown --store %q: want embedded or hbase", sf.kind)
	}
}

// backupEmbedded checkpoints the embedded store in data into dir
// (absolute) and copies data's JWT secret beside it; it reports how:
// "server" (the serving gateway's admin socket) or "store" (opened here).
func backupEmbedded(ctx context.Context, data, dir string) (string, error) {
	if ok, err := embedded.HasStore(data); err != nil {
		return "", err
	} else if !ok {
		return "", fmt.Errorf("--data %s holds no embedded store", data)
	}
	if ents, err := os.ReadDir(dir); err == nil {
		if len(ents) > 0 {
			return "", fmt.Errorf("--to %s is not empty: back up into a new or empty directory", dir)
		}
		if err := os.Remove(dir); err != nil { // pebble creates the directory itself
			return "", err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	how := "server"
	err := askCheckpoint(ctx, data, dir)
	if errors.Is(err, errNoServer) {
		how = "store"
		st, oerr := embedded.Open(data)
		if oerr != nil {
			return "", fmt.Errorf("%w; and opening it here failed: %w", err, oerr)
		}
		err = errors.Join(st.Checkpoint(ctx, dir), st.Close())
	}
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(filepath.Join(data, jwtSecretFile)); err == nil {
		if err := writeFileAtomic(filepath.Join(dir, jwtSecretFile), b, 0o600); err != nil {
			return "", fmt.Errorf("copy the JWT secret: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("copy the JWT secret: %w", err)
	}
	return how, nil
}

// restoreCmd runs `gateway restore --from DIR [--repair=true] [store
// flags]` (docs/operations.md, "Backup and restore"): on the embedded
// store it copies the checkpoint in DIR into --data, which must not exist
// or be empty; on HBase it imports the exported snapshots of DIR into
// --namespace, which must hold no tables (restoreHBase). Then, unless
// --repair=false, it settles what writes in flight during the backup left
// half-done, as `gateway fsck --repair` would with no gateway running
// (restoreRepair). Restore before any gateway serves the new store.
func restoreCmd(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	var hf hbaseToolFlags
	hf.register(fs)
	from := fs.String("from", "", "local directory that `gateway backup --to` wrote")
	repair := fs.Bool("repair", true, "after the restore, settle the writes the backup caught half-done (fsck --repair with no grace); false keeps the backup's image exactly")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || fs.NArg() > 0 {
		return errors.New("usage: gateway restore --from DIR [store flags]")
	}
	start := time.Now()
	switch sf.kind {
	case hbase.BackendEmbedded:
		if err := embedded.CopyCheckpoint(*from, sf.data); err != nil {
			return err
		}
		log.Info("checkpoint copied", "from", *from, "data", sf.data, "elapsed", time.Since(start).Round(time.Millisecond))
	case hbase.BackendHBase:
		if err := restoreHBase(ctx, log, sf, hf, *from); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown --store %q: want embedded or hbase", sf.kind)
	}
	if *repair {
		if err := restoreRepair(ctx, log, sf); err != nil {
			return fmt.Errorf("restored, but the repair failed (run `gateway fsck --repair --grace 0s` before serving): %w", err)
		}
	}
	log.Info("restore done", "store", sf.kind, "from", *from, "repaired", *repair, "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// restoreRepairPasses bounds the fsck passes of restoreRepair: a repair
// may leave work for the next pass (a fan-out kept while its author's
// unfinished write was being settled).
const restoreRepairPasses = 5

// restoreRepair creates the tables the backup lacks (a backup of an older
// version) and runs fsck --repair on the restored store with no grace,
// pass after pass until one finds nothing: no gateway writes to the store
// yet, so every unfinished write's marker belongs to a write the backup
// caught in flight. It fails when issues remain after the last pass.
func restoreRepair(ctx context.Context, log *slog.Logger, sf storeFlags) error {
	st, err := sf.openMigrated(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// Nothing runs on the restored store: the smallest grace takes every
	// marker for dead.
	const noGrace = time.Nanosecond
	svc := domain.New(st, domain.WithLogger(log), domain.WithRepairGrace(noGrace))
	for pass := 1; ; pass++ {
		rep, err := fsck.Run(ctx, svc, fsck.Options{Repair: true, RepairGrace: noGrace})
		if err != nil {
			return migrateHint(err)
		}
		left := rep.Unrepaired()
		log.Info("restore: repair pass", "pass", pass, "issues", len(rep.Issues), "unrepaired", left, "per_kind", rep.Counts())
		switch {
		case len(rep.Issues) == 0:
			return nil
		case pass == restoreRepairPasses && left == 0:
			return nil
		case pass == restoreRepairPasses:
			return fmt.Errorf("%d issue(s) left unrepaired after %d passes", left, pass)
		}
	}
}
