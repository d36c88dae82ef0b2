package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// countingListener counts the Writes on the connections it accepts.
type countingListener struct {
	net.Listener
	mu     sync.Mutex
	writes []int // the length of each Write, in order
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

func (l *countingListener) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.writes
	l.writes = nil
	return w
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes = append(c.l.writes, len(b))
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// TestResponseWrites checks how a response reaches the socket: a response
// of up to 4 KiB with its headers in one write, a page of ~10 KiB (a home
// timeline's size) in two — net/http's 4 KiB connection buffer, then the
// rest — not one more for the response's closing bytes, and a response
// larger than the joined limit (64 KiB) whole and unchanged.
func TestResponseWrites(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	ts := httptest.NewUnstartedServer(g.h)
	cl := &countingListener{Listener: ts.Listener}
	ts.Listener = cl
	ts.Start()
	t.Cleanup(ts.Close)

	// aliases builds a query of n aliased __typename fields whose response
	// is about n*size bytes.
	aliases := func(n, size int) string {
		var q strings.Builder
		q.WriteString("{")
		for i := range n {
			fmt.Fprintf(&q, " a%0*d: __typename", size-len(`"a":"Query",`), i)
		}
		q.WriteString(" }")
		return q.String()
	}
	tests := []struct {
		name   string
		query  string
		writes int // socket writes of the response, headers included
	}{
		{"small", "{ __typename }", 1},
		{"a page of 10 KiB", aliases(200, 50), 2},
		{"over 64 KiB", aliases(200, 400), 0}, // 0: not checked, only the body
	}
	client := ts.Client()
	client.Transport.(*http.Transport).DisableCompression = true // as k6 sends: no Accept-Encoding
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"query": tc.query})
			cl.take()
			resp, err := client.Post(ts.URL+"/graphql", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, read error %v", resp.StatusCode, err)
			}
			var r struct {
				Data       map[string]string `json:"data"`
				Errors     []any             `json:"errors"`
				Extensions map[string]any    `json:"extensions"`
			}
			if err := json.Unmarshal(b, &r); err != nil || len(r.Errors) > 0 || len(r.Data) == 0 {
				t.Fatalf("response %.200s: %v", b, err)
			}
			for k, v := range r.Data {
				if v != "Query" {
					t.Fatalf("data[%q] = %q", k, v)
				}
			}
			if r.Extensions["cost"] == nil {
				t.Fatalf("no extensions.cost (the response's tail) in %.200s", b[len(b)-min(len(b), 200):])
			}
			writes := cl.take()
			t.Logf("%d bytes in writes of %v", len(b), writes)
			if tc.writes > 0 && len(writes) != tc.writes {
				t.Errorf("the response (%d bytes) took %d socket writes %v, want %d", len(b), len(writes), writes, tc.writes)
			}
		})
	}
}

// TestResponseBuffersConcurrent sends responses of two sizes from several
// clients at once, each one's data compared with the first answer's byte for
// byte: the
// data buffers the executor takes from package respbuf, and the transport
// gives back once a response is written, serve one response at a time.
func TestResponseBuffersConcurrent(t *testing.T) {
	// No rate limit: 400 introspections of the whole schema would spend the
	// clients' cost budget, and a refused request has no data to compare.
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.RateLimit = -1 })
	queries := []string{
		"{ a: __typename b: __typename }",
		"{ __schema { types { name fields { name args { name } type { name kind } } } } }", // 16-64 KiB
	}
	post := func(q string) []byte {
		body, _ := json.Marshal(map[string]string{"query": q})
		resp, err := http.Post(g.url+"/graphql", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Error(err)
			return nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r struct { // the data's bytes (extensions.cost.budget changes)
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return b
		}
		return r.Data
	}
	want := make([][]byte, len(queries))
	for i, q := range queries {
		want[i] = post(q)
		if !bytes.HasPrefix(want[i], []byte(`{"`)) {
			t.Fatalf("query %d: %.200s", i, want[i])
		}
	}
	if len(want[1]) < 16<<10 || len(want[1]) > 64<<10 {
		t.Fatalf("the large response is %d bytes, want 16-64 KiB (pooled)", len(want[1]))
	}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for i := range 100 {
				k := (i + c) % len(queries)
				if got := post(queries[k]); !bytes.Equal(got, want[k]) {
					t.Errorf("client %d, request %d: response %d differs from its first answer:\n%.300s", c, i, k, got)
					return
				}
			}
		})
	}
	wg.Wait()
}
