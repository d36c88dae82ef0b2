package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestServeNATSFlags: serve --nats-listen runs its embedded NATS server on
// that address (a NATS client can use it), a second serve joins it with
// GATEWAY_NATS_URL, and an unreachable --nats-url fails the start.
func TestServeNATSFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEWAY_") {
			env = append(env, kv)
		}
	}
	env = append(env, "GATEWAY_JWT_SECRET=nats-test-secret-nats-test-secret-nats")
	natsAddr := freeAddr(t)
	a := startServe(t, bin, env, "--data", filepath.Join(t.TempDir(), "a"), "--nats-listen", natsAddr)
	b := startServe(t, bin, append(env, "GATEWAY_NATS_URL=nats://"+natsAddr), "--data", filepath.Join(t.TempDir(), "b"))
	if want := "listening at nats://" + natsAddr; !strings.Contains(a.logs.String(), want) {
		t.Errorf("the first serve's log lacks %q:\n%s", want, a.logs.String())
	}
	if want := `nats=nats://` + natsAddr; !strings.Contains(b.logs.String(), want) {
		t.Errorf("the second serve's log lacks %q:\n%s", want, b.logs.String())
	}

	nc, err := nats.Connect("nats://"+natsAddr, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("connect to the embedded NATS server: %v", err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("weibo.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("weibo.test", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "hi" {
		t.Fatalf("round trip through the embedded server: %v %v", m, err)
	}

	out, err := exec.Command(bin, "serve", "--data", filepath.Join(t.TempDir(), "c"), "--addr", freeAddr(t), "--nats-url", "nats://127.0.0.1:1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "event bus") {
		t.Fatalf("serve with an unreachable --nats-url: %v\n%s", err, out)
	}
}
