package pushws

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

// engine is the process's nbio engine: its pollers serve the connections
// of every Transport (started on first use, never stopped). The bytes a
// connection's socket takes go to its session (session.written).
var engine = sync.OnceValues(func() (*nbhttp.Engine, error) {
	logging.SetLogger(nbioLog{})
	e := nbhttp.NewEngine(nbhttp.Config{Name: "gateway-ws", NPoller: 1, ReleaseWebsocketPayload: true})
	e.OnWrittenSize(func(c *nbio.Conn, _ []byte, n int) {
		if wc, ok := c.Session().(*websocket.Conn); ok {
			if s, ok := wc.Session().(*session); ok {
				s.written(n)
			}
		}
	})
	return e, e.Start()
})

// nbioLog sends nbio's warnings and errors to the process's slog logger
// (its own would print them to standard output); its debug and info lines
// are dropped.
type nbioLog struct{}

func (nbioLog) Debug(string, ...any) {}
func (nbioLog) Info(string, ...any)  {}
func (nbioLog) Warn(format string, v ...any) {
	slog.Warn("websocket poller: " + fmt.Sprintf(format, v...))
}
func (nbioLog) Error(format string, v ...any) {
	slog.Error("websocket poller: " + fmt.Sprintf(format, v...))
}

// upgrade upgrades r's connection for s and hands it to e's pollers,
// which then deliver its messages to s (session.receive) and its close
// (session.closed). On an error the upgrader has answered w.
func upgrade(e *nbhttp.Engine, w http.ResponseWriter, r *http.Request, s *session) error {
	u := websocket.NewUpgrader() // one per connection: its handlers know s
	u.Engine = e
	u.Subprotocols = []string{graphqlTransportWS}
	u.CheckOrigin = s.t.checkOrigin
	u.MessageLengthLimit = s.t.maxMessage
	// A message may come before Upgrade returns: each handler learns the
	// connection from its argument.
	u.OnMessage(func(c *websocket.Conn, _ websocket.MessageType, data []byte) {
		s.attach(c)
		s.receive(data)
	})
	u.OnClose(func(*websocket.Conn, error) { s.closed() })
	conn, err := u.UpgradeAndTransferConnToPoller(w, r, nil)
	if err != nil {
		return err
	}
	s.attach(conn)
	return nil
}
