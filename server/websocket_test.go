package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// TestGorillaWebsocket checks the adapter gqlgen's transport sees: the
// subprotocols offered (the upgrader's own left as they are), a message
// read, a normal close by the peer reported as transport.ErrWebsocketClosed,
// a close message written with its code and text, and an upgrade the Origin
// check refuses.
func TestGorillaWebsocket(t *testing.T) {
	impl := gorillaWebsocket{upgrader: websocket.Upgrader{
		Subprotocols: []string{"own"},
		CheckOrigin:  func(r *http.Request) bool { return r.Header.Get("Origin") != "http://evil.example" },
	}}
	type result struct {
		sub, msg string
		closed   error
	}
	results := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := impl.Accept(w, r, transport.WebsocketAcceptOptions{ResponseHeader: http.Header{},
			Subprotocols: []string{"graphql-ws", "graphql-transport-ws"}})
		if err != nil {
			return // the upgrader answered the request
		}
		defer c.Close()
		if r.URL.Query().Has("close") { // the server closes
			_ = c.WriteClose(4400, "bye")
			_, _, _ = c.NextReader() // the peer's answer
			return
		}
		var res result
		res.sub = c.Subprotocol()
		if _, rd, err := c.NextReader(); err == nil {
			b, _ := io.ReadAll(rd)
			res.msg = string(b)
		}
		_, _, res.closed = c.NextReader()
		results <- res
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}

	// The client writes a message and closes.
	conn, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init"}`)); err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")); err != nil {
		t.Fatal(err)
	}
	res := <-results
	if res.sub != "graphql-transport-ws" || res.msg != `{"type":"connection_init"}` || !errors.Is(res.closed, transport.ErrWebsocketClosed) {
		t.Errorf("server saw subprotocol %q, message %q, close %v", res.sub, res.msg, res.closed)
	}
	if got := impl.upgrader.Subprotocols; len(got) != 1 || got[0] != "own" {
		t.Errorf("the upgrader's subprotocols became %q", got)
	}

	// The server closes.
	conn2, _, err := d.Dial(url+"?close", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	_, _, err = conn2.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4400 || ce.Text != "bye" {
		t.Fatalf("read %v, want the close message 4400 bye", err)
	}

	_, resp, err := d.Dial(url, http.Header{"Origin": {"http://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upgrade from another origin: %v (response %v), want HTTP 403", err, resp)
	}
}
