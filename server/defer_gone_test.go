package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestDeferClientGone: a client that goes away while a deferred fragment
// is pending leaves no goroutine waiting for that fragment's result (the
// executor's handler stops waiting when the request's context ends),
// even while the fragment itself is still running.
func TestDeferClientGone(t *testing.T) {
	st := &gatedStore{StoreAdmin: testenv.Embedded(t), stubborn: true, entered: make(chan struct{}), release: make(chan struct{})}
	g := startGateway(t, st)
	a := g.register(uniqueName("gone"))
	g.publish(a.token, "deferred post")
	st.armed.Store(true)
	defer close(st.release)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	body := mustJSON(map[string]any{"query": `query($id: ID!) { user(id: $id) { id ... @defer(label: "posts") { posts(first: 3) { edges { node { content } } } } } }`, "variables": map[string]any{"id": a.ID}})
	req, _ := http.NewRequestWithContext(ctx, "POST", g.url+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", multipartAccept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	part, err := multipart.NewReader(resp.Body, params["boundary"]).NextPart()
	if err != nil {
		t.Fatal(err)
	}
	var first payload
	if err := json.NewDecoder(part).Decode(&first); err != nil || string(first.Data) != fmt.Sprintf(`{"user":{"id":%q}}`, a.ID) {
		t.Fatalf("initial payload %s (%v)", mustJSON(first), err)
	}
	select {
	case <-st.entered:
	case <-time.After(time.Minute): // a bound on a hang, not a measure
		t.Fatal("the deferred fragment made no scan")
	}
	cancel()
	resp.Body.Close()
	for deadline := time.Now().Add(time.Minute); waitingInExec(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a goroutine still waits for the deferred result of a request that ended")
		}
	}
}

// waitingInExec reports whether a goroutine runs the generated
// executor's response handler.
func waitingInExec() bool {
	buf := make([]byte, 8<<20)
	n := runtime.Stack(buf, true)
	return bytes.Contains(buf[:n], []byte("graph.(*executableSchema).Exec.func"))
}
