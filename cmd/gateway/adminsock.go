package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// adminSocketName is the unix socket that `gateway serve` on the embedded
// store opens in its data directory: pebble locks the directory, so
// `gateway backup` asks the serving process for the checkpoint through it.
// Mode 0600 (the store's owner only); removed when serve exits.
const adminSocketName = "admin.sock"

// The socket's protocol: one request line per connection, "checkpoint
// <absolute directory>", answered by one line, "ok" or "error <message>".
const (
	adminCheckpoint = "checkpoint"
	adminOK         = "ok"
	adminErr        = "error"
	// adminLineMax bounds a request line, in bytes.
	adminLineMax = 4096
)

// checkpointer is the embedded store's Checkpoint (embedded.Store).
type checkpointer interface {
	Checkpoint(ctx context.Context, dir string) error
}

// findCheckpointer returns the first store of st's chain of decorators
// (each Unwrap()) that can take a checkpoint.
func findCheckpointer(st hbase.Store) (checkpointer, bool) {
	for st != nil {
		if c, ok := st.(checkpointer); ok {
			return c, true
		}
		u, ok := st.(interface{ Unwrap() hbase.StoreAdmin })
		if !ok {
			break
		}
		st = u.Unwrap()
	}
	return nil, false
}

// serveAdminSocket listens on dataDir/admin.sock for checkpoint requests
// for st until ctx ends or the returned stop is called, which removes the
// socket. The socket is bound under a temporary name, made 0600, then
// renamed into place, so it is never reachable with wider permissions. A
// leftover socket of a process that died is replaced: the caller holds the
// store's lock, so no other server is using it.
func serveAdminSocket(ctx context.Context, log *slog.Logger, dataDir string, st hbase.Store) (stop func(), err error) {
	cp, ok := findCheckpointer(st)
	if !ok {
		return nil, errors.New("admin socket: the store takes no checkpoints")
	}
	path := filepath.Join(dataDir, adminSocketName)
	tmp := filepath.Join(dataDir, fmt.Sprintf(".%s.%d", adminSocketName, os.Getpid()))
	_ = os.Remove(tmp)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	l.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		l.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		l.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(done)
				return
			}
			go handleAdminConn(ctx, log, c, cp)
		}
	}()
	stopped := false
	return func() {
		if stopped {
			return
		}
		stopped = true
		l.Close()
		<-done
		_ = os.Remove(path)
	}, nil
}

// handleAdminConn answers one request of the admin socket.
func handleAdminConn(ctx context.Context, log *slog.Logger, c net.Conn, cp checkpointer) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, adminLineMax)).ReadString('\n')
	if err != nil {
		fmt.Fprintf(c, "%s unreadable request: %v\n", adminErr, err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	cmd, dir, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	if cmd != adminCheckpoint || !filepath.IsAbs(dir) {
		fmt.Fprintf(c, "%s want %q and an absolute directory\n", adminErr, adminCheckpoint)
		return
	}
	start := time.Now()
	if err := cp.Checkpoint(ctx, dir); err != nil {
		log.Error("checkpoint failed", "dir", dir, "err", err)
		fmt.Fprintf(c, "%s %s\n", adminErr, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	log.Info("checkpoint taken", "dir", dir, "elapsed", time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(c, adminOK)
}

// errNoServer is askCheckpoint's error when no server answers on the socket.
var errNoServer = errors.New("no gateway serves the data directory")

// askCheckpoint asks the gateway serving dataDir to checkpoint its store
// into dir (absolute). It returns errNoServer (wrapped) when no process
// listens on the socket, and the server's error otherwise.
func askCheckpoint(ctx context.Context, dataDir, dir string) error {
	path := filepath.Join(dataDir, adminSocketName)
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("%w (%s: %v)", errNoServer, path, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stopWatch := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stopWatch()
	if _, err := fmt.Fprintf(c, "%s %s\n", adminCheckpoint, dir); err != nil {
		return fmt.Errorf("admin socket %s: %w", path, err)
	}
	line, err := bufio.NewReader(io.LimitReader(c, adminLineMax)).ReadString('\n')
	if err != nil {
		return fmt.Errorf("admin socket %s: no answer: %w", path, err)
	}
	line = strings.TrimSuffix(line, "\n")
	if line == adminOK {
		return nil
	}
	msg, _ := strings.CutPrefix(line, adminErr+" ")
	return fmt.Errorf("the serving gateway: %s", msg)
}
