package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Checkpoint writes a consistent copy of the store into dir, which must not
// exist yet (its parent is created when missing): pebble's checkpoint, the
// sstables hard-linked where dir is on the store's filesystem and copied
// otherwise, plus the WAL and MANIFEST as of one instant. The copy holds
// every write acknowledged before the call and is itself an embedded store
// directory: Open opens it (or CopyCheckpoint copies it into place). Writes
// go on during the checkpoint. It fails for a closed or in-memory store, an
// existing dir, or any I/O error, removing what it wrote.
func (s *Store) Checkpoint(ctx context.Context, dir string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if s.inMemory {
		return errors.New("hbase: embedded store: an in-memory store has no checkpoint")
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return fmt.Errorf("hbase: embedded store: checkpoint: %w", err)
	}
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			_ = os.RemoveAll(dir)
		}
		return fmt.Errorf("hbase: embedded store: checkpoint into %s: %w", dir, err)
	}
	return nil
}

// CopyCheckpoint copies the checkpoint in from (Checkpoint's dir, or a copy
// of it) into the directory to, which must be missing or empty, file by
// file, each synced. It refuses a non-empty to and a from that holds no
// pebble store (HasStore), and leaves to empty on
// failure. Subdirectories of from are not copied: a checkpoint has none.
func CopyCheckpoint(from, to string) error {
	ok, err := HasStore(from)
	if err != nil {
		return fmt.Errorf("hbase: embedded store: read checkpoint: %w", err)
	}
	if !ok {
		return fmt.Errorf("hbase: embedded store: %s holds no embedded store checkpoint (no MANIFEST file)", from)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return fmt.Errorf("hbase: embedded store: read checkpoint: %w", err)
	}
	if got, err := os.ReadDir(to); err == nil && len(got) > 0 {
		return fmt.Errorf("hbase: embedded store: %s is not empty: restore only into a new or empty directory", to)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("hbase: embedded store: %w", err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return fmt.Errorf("hbase: embedded store: %w", err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			emptyDir(to)
			return fmt.Errorf("hbase: embedded store: restore %s: %w", e.Name(), err)
		}
	}
	d, err := os.Open(to)
	if err != nil {
		emptyDir(to)
		return fmt.Errorf("hbase: embedded store: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		emptyDir(to)
		return fmt.Errorf("hbase: embedded store: sync %s: %w", to, err)
	}
	return nil
}

// copyFile copies the regular file from to the new file to, keeping its
// permission bits, and syncs it.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// emptyDir removes what dir holds, keeping dir.
func emptyDir(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// HasStore reports whether dir holds a pebble store (a MANIFEST file), as
// an embedded store's data directory or a checkpoint does; a missing dir
// holds none.
func HasStore(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "MANIFEST-") && e.Type().IsRegular() {
			return true, nil
		}
	}
	return false, nil
}
