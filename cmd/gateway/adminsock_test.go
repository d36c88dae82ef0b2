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
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestAdminSocket serves the admin socket of an embedded store: it is
// mode 0600, takes a checkpoint that opens as a store, refuses any other
// command and a relative directory, and is gone once stopped, after which
// askCheckpoint reports that no server answers.
func TestAdminSocket(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "store")
	st, err := embedded.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	// The decorators serve puts around the store: the socket finds the store behind them.
	wrapped := hbase.Instrument(hbase.WithNamespace(st, tables.Namespace, tables.Namespace))
	stop, err := serveAdminSocket(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), data, wrapped)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	sock := filepath.Join(data, adminSocketName)
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin socket mode %v, want a socket of mode 0600", fi.Mode())
	}

	cp := filepath.Join(t.TempDir(), "cp")
	if err := askCheckpoint(ctx, data, cp); err != nil {
		t.Fatal(err)
	}
	if ok, err := embedded.HasStore(cp); err != nil || !ok {
		t.Fatalf("the checkpoint holds no store: %v", err)
	}
	if err := askCheckpoint(ctx, data, cp); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second checkpoint into the same directory: %v", err)
	}
	for _, req := range []string{"drop everything", "checkpoint relative/dir", "checkpoint"} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "%s\n", req)
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || !strings.HasPrefix(line, adminErr+" ") {
			t.Errorf("request %q: answer %q, %v; want an error", req, line, err)
		}
	}

	stop()
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there after stop: %v", err)
	}
	if err := askCheckpoint(ctx, data, filepath.Join(t.TempDir(), "cp2")); !errors.Is(err, errNoServer) {
		t.Errorf("askCheckpoint with no server: %v, want errNoServer", err)
	}
}
