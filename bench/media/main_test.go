package main

import (
	"bytes"
	"image/jpeg"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestMakeJPEG(t *testing.T) {
	a, err := makeJPEG(400, 300, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := makeJPEG(400, 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two seeds made the same picture")
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 400 || cfg.Height != 300 {
		t.Fatalf("decoded %dx%d, want 400x300", cfg.Width, cfg.Height)
	}
}

// TestNginxConf runs the system's nginx (skipped when it is not
// installed) with nginxConf's configuration and checks that it serves a
// thumbnail's bytes with the gateway's headers, and 404 elsewhere.
func TestNginxConf(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed")
		}
		bin = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	for _, d := range []string{"tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi", "root/media/media:7"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := []byte("\xff\xd8\xff not really a picture")
	if err := os.WriteFile(filepath.Join(dir, "root/media/media:7/thumb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	th := thumb{Path: "/media/media%3A7/thumb", Bytes: len(data), ETag: `"abc123"`, Type: "image/jpeg",
		cacheControl: "public, max-age=31536000, immutable", nosniff: "nosniff", csp: "sandbox"}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, port, true, []thumb{th})), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir+"/", "-e", filepath.Join(dir, "error.log"), "-c", conf, "-g", "daemon off;")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// TERM: the master stops its workers (after a KILL they would stay)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	var res *http.Response
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, err = http.Get(base + th.Path)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not answer: %v; %s", err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET %s: HTTP %d, %q", th.Path, res.StatusCode, body)
	}
	for h, want := range map[string]string{"ETag": th.ETag, "Content-Type": th.Type, "Cache-Control": th.cacheControl,
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox", "Content-Length": strconv.Itoa(len(data))} {
		if got := res.Header.Values(h); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	res, err = http.Get(base + "/media/media%3A8/thumb")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("another path: HTTP %d, want 404", res.StatusCode)
	}
}
