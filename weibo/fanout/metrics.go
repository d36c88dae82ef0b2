package fanout

import "github.com/prometheus/client_golang/prometheus"

// The fan-out's Prometheus metrics, registered on the default registry when
// the package loads (docs/operations.md says what to alert on).
var (
	// FanoutLag is gateway_fanout_lag_seconds: for each fan-out done, the
	// seconds from the post's publication (its id's time) to its last inbox
	// write. A fan-out taken over from a dead instance, or held up by an
	// outage, shows here with its whole delay.
	FanoutLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "gateway_fanout_lag_seconds",
		Help:    "Seconds from a post's publication to the last inbox write of its fan-out.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800},
	})
	// OutboxDepth is gateway_outbox_depth: the rows of weibo:outbox (fan-outs
	// not known to be done) as the last outbox sweep counted them.
	OutboxDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gateway_outbox_depth",
		Help: "Rows of weibo:outbox (fan-outs not done) at the last outbox sweep.",
	})
	// FanoutLeases is gateway_fanout_leases_total{result}: fan-out lease
	// attempts by result — acquired, held (another instance works the
	// post), done (no outbox row: the fan-out was finished), lost (taken
	// over while working: this instance's lease had expired).
	FanoutLeases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_fanout_leases_total",
		Help: "Fan-out lease attempts by result: acquired, held, done, lost.",
	}, []string{"result"})
)

func init() { prometheus.MustRegister(FanoutLag, OutboxDepth, FanoutLeases) }
