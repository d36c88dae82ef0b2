package feed

import (
	"io"
	"log/slog"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/notify"
)

// newQuiet returns a feed over st with a protocol and notifications of
// its own, logging nowhere.
func newQuiet(st hbase.Store, opts ...Option) *Service {
	w := counted.New(st, counted.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	n := notify.New(st, w, events.NewEmitter(bus.NewLocal(), false, w.Logger()), 0)
	return New(st, w, n, opts...)
}
