package server

import (
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// gorillaWebsocket accepts gqlgen's WebSocket connections with
// gorilla/websocket, as gqlgen's transport.Websocket itself did before it
// took WebSocket implementations as adapters (its default is now
// coder/websocket): the gateway's WebSocket upgrades, frames, close
// messages and Origin check (upgrader.CheckOrigin) stay what they were.
type gorillaWebsocket struct {
	upgrader websocket.Upgrader
}

// Accept implements transport.WebsocketImplementation: it upgrades the
// request with the upgrader, offering gqlgen's subprotocols after the
// upgrader's own.
func (g gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	u := g.upgrader
	u.Subprotocols = slices.Clone(u.Subprotocols)
	for _, p := range opts.Subprotocols {
		if !slices.Contains(u.Subprotocols, p) {
			u.Subprotocols = append(u.Subprotocols, p)
		}
	}
	c, err := u.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return gorillaConn{c}, nil
}

// wsWriteBuffers are the write buffers of the WebSocket connections
// (Upgrader.WriteBufferPool), taken for a message and given back after.
var wsWriteBuffers sync.Pool

// gorillaConn is a gorilla connection as gqlgen's transport uses one
// (transport.WebsocketConn, and through *websocket.Conn's own methods
// transport.WebsocketReadLimiter and transport.WebsocketReadDeadliner).
type gorillaConn struct{ *websocket.Conn }

// NextReader returns the next message's reader; transport.ErrWebsocketClosed
// when the peer closed the connection normally (close code 1000, or none).
func (c gorillaConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.Conn.NextReader()
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived) {
		return t, nil, transport.ErrWebsocketClosed
	}
	return t, r, err
}

// WriteClose sends a close message with code and text.
func (c gorillaConn) WriteClose(code int, text string) error {
	return c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, text))
}
