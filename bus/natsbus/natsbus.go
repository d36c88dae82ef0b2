// Package natsbus is the gateway's event bus (package bus) over NATS core
// publish/subscribe: an embedded NATS server in the gateway process (the
// default; in-process connections, on no TCP port unless asked to listen so
// that other instances can connect), or an external NATS server or
// cluster. Events are at most once, as core NATS delivers them: while the
// connection is away, nats.go buffers what is published (up to its
// reconnect buffer, 8 MB) and subscriptions miss what others publish;
// clients resume from the store (package feed's home-timeline resume).
package natsbus

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weibohbase/gateway/bus"
)

// Config says which NATS the bus uses.
type Config struct {
	// URL, when not empty, is an external NATS server: "nats://host:port",
	// or several comma-separated for a cluster. No server is embedded.
	URL string
	// Listen, when not empty and URL is empty, is the HOST:PORT on which
	// the embedded server accepts other gateway instances' connections
	// (port 0: any free port; Bus.ClientURL says which). Empty: the
	// embedded server listens on no port.
	Listen string
	// Name names this connection in the NATS server's monitoring (default "gateway").
	Name string
	// Logger logs disconnects and reconnects (default slog.Default()).
	Logger *slog.Logger
}

// Bus is a bus.Bus over one NATS connection, with the embedded server it
// may have started. Close it to drain the connection and stop the server.
type Bus struct {
	nc  *nats.Conn
	srv *server.Server // nil: external NATS
	log *slog.Logger

	mu     sync.Mutex
	closed bool
	gap    chan struct{} // closed at the next disconnect (Interrupted)

	// Every subscription's messages go to msgs, which one goroutine
	// (dispatch) hands to the subscriptions' functions: nats.go's own
	// delivery would run a goroutine per subscription, the largest part
	// of an idle subscription's memory after its WebSocket.
	msgs chan *nats.Msg
	done chan struct{} // closed by Close: dispatch returns
	smu  sync.RWMutex
	subs map[*nats.Subscription]*chanSub
}

// dispatchQueue is how many messages msgs holds for dispatch; past that
// nats.go drops messages (a slow consumer, logged by the error handler).
// The subscribers' functions do not block, so it fills only when the
// process has no CPU to spare.
const dispatchQueue = 1 << 16

// chanSub is one subscription's function.
type chanSub struct {
	mu sync.Mutex // serializes calls of fn; held while cancelling
	fn func([]byte)
	on bool
}

var _ bus.Bus = (*Bus)(nil)

// Connected is gateway_bus_connected: 1 while this instance's bus
// connection is up, 0 while it is away.
var Connected = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "gateway_bus_connected",
	Help: "1 while the event bus (NATS) connection is up, 0 while it is away.",
})

func init() { prometheus.MustRegister(Connected) }

// Open starts the embedded NATS server (unless c.URL names one) and
// connects to it. Errors: the server does not start within 10 s, the
// listen address is taken, or the external NATS cannot be reached (the
// first connect is not retried: a misconfigured URL fails the start).
func Open(c Config) (_ *Bus, err error) {
	b := &Bus{log: c.Logger, gap: make(chan struct{}), msgs: make(chan *nats.Msg, dispatchQueue), done: make(chan struct{}),
		subs: map[*nats.Subscription]*chanSub{}}
	if b.log == nil {
		b.log = slog.Default()
	}
	if c.Name == "" {
		c.Name = "gateway"
	}
	opts := []nats.Option{
		nats.Name(c.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			Connected.Set(0)
			if nc.IsClosed() {
				return // Close
			}
			b.interrupt()
			b.log.Warn("event bus disconnected; live events wait for the reconnect", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			Connected.Set(1)
			b.log.Info("event bus reconnected", "server", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			b.log.Warn("event bus error", "subject", subject, "err", err)
		}),
	}
	url := c.URL
	if url == "" {
		if b.srv, err = embedded(c.Listen); err != nil {
			return nil, err
		}
		url = b.srv.ClientURL()
		opts = append(opts, nats.InProcessServer(b.srv))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if b.srv != nil {
			b.srv.Shutdown()
		}
		return nil, fmt.Errorf("event bus: connect to %s: %w", url, err)
	}
	b.nc = nc
	Connected.Set(1)
	go b.dispatch()
	return b, nil
}

// dispatch calls the function of each message's subscription, in the
// order the connection received them, until Close.
func (b *Bus) dispatch() {
	for {
		select {
		case <-b.done:
			return
		case m := <-b.msgs:
			b.smu.RLock()
			cs := b.subs[m.Sub]
			b.smu.RUnlock()
			if cs == nil {
				continue // cancelled
			}
			cs.mu.Lock()
			if cs.on {
				cs.fn(m.Data)
			}
			cs.mu.Unlock()
		}
	}
}

// embedded starts a NATS server in this process: on listen (HOST:PORT) or,
// when listen is empty, on no port at all.
func embedded(listen string) (*server.Server, error) {
	o := &server.Options{ServerName: "gateway", NoLog: true, NoSigs: true, DontListen: listen == "",
		MaxPayload: 1 << 20}
	if listen != "" {
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return nil, fmt.Errorf("event bus: listen address %q: %w", listen, err)
		}
		if o.Port, err = strconv.Atoi(port); err != nil {
			return nil, fmt.Errorf("event bus: listen port %q: %w", port, err)
		}
		if o.Port == 0 {
			o.Port = server.RANDOM_PORT
		}
		o.Host = host
	}
	srv, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("event bus: embedded NATS server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("event bus: the embedded NATS server did not start (is " + listen + " in use?)")
	}
	return srv, nil
}

// ClientURL is the URL other instances connect to (nats://HOST:PORT) when
// the embedded server listens, else "".
func (b *Bus) ClientURL() string {
	if b.srv == nil || b.srv.Addr() == nil {
		return ""
	}
	return "nats://" + b.srv.Addr().String()
}

// ServerURL is the URL of the NATS server the bus is connected to, with
// any password redacted ("" while disconnected).
func (b *Bus) ServerURL() string { return b.nc.ConnectedUrlRedacted() }

// Interrupted implements bus.Bus: the channel is closed when the
// connection to NATS drops.
func (b *Bus) Interrupted() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gap
}

// Connected implements bus.Bus: whether the NATS connection is up (false
// while nats.go reconnects, and after Close).
func (b *Bus) Connected() bool { return b.nc.IsConnected() }

// interrupt closes the current Interrupted channel and starts another.
func (b *Bus) interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.gap)
	b.gap = make(chan struct{})
}

// Publish implements bus.Bus with a core NATS publish.
func (b *Bus) Publish(subject string, data []byte) error {
	return b.nc.Publish(subject, data)
}

// Subscribe implements bus.Bus with a core NATS subscription, whose
// messages the bus's one dispatching goroutine hands to fn (a channel
// subscription: no goroutine of its own). It returns once the server has
// the subscription (a flush, at most 2 s; while the connection is away it
// returns at once and nats.go subscribes again on reconnect), so that what
// is published after it returns reaches fn.
func (b *Bus) Subscribe(subject string, fn func([]byte)) (func(), error) {
	cs := &chanSub{fn: fn, on: true}
	b.smu.Lock() // dispatch finds cs from the first message on
	s, err := b.nc.ChanSubscribe(subject, b.msgs)
	if err == nil {
		b.subs[s] = cs
	}
	b.smu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("event bus: subscribe %s: %w", subject, err)
	}
	if b.nc.IsConnected() {
		_ = b.nc.FlushTimeout(2 * time.Second)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = s.Unsubscribe()
			b.smu.Lock()
			delete(b.subs, s)
			b.smu.Unlock()
			cs.mu.Lock() // a call under way ends first
			cs.on = false
			cs.mu.Unlock()
		})
	}, nil
}

// Close flushes what was published (when connected, at most 5 s), closes
// the connection and stops the embedded server.
func (b *Bus) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.nc.IsConnected() {
		_ = b.nc.FlushTimeout(5 * time.Second)
	}
	b.nc.Close()
	close(b.done)
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
	Connected.Set(0)
	return nil
}
