package server

import (
	"context"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/server/pushws"
	"github.com/weibohbase/gateway/weibo/domain"
)

// newPushWS returns the graphql-transport-ws transport of cfg: the Origin
// policy of CORSOrigins, the token of connection_init (wsInit), the
// executor's error presenter, MaxBodyBytes as a message's bound, the
// dataloaders of loaderScope, MaxWebSocketOperations, and gate's
// admission of connections.
func newPushWS(cfg Config, gate *wsGate) *pushws.Transport {
	maxOps := limit(cfg.MaxWebSocketOperations)
	return pushws.New(
		pushws.CheckOrigin(newOriginPolicy(cfg.CORSOrigins).checkWebSocket),
		pushws.InitFunc(wsInit(cfg.Tokens)),
		pushws.ErrorPresenter(errorPresenter(cfg.Logger)),
		pushws.MaxMessageBytes(int(cfg.MaxBodyBytes)),
		pushws.OperationScope(loaderScope{svc: cfg.Svc}),
		pushws.MaxOperations(maxOps, func(context.Context) *gqlerror.Error { return tooManyOperations(maxOps) }),
		pushws.Admit(gate.admit(transportWS)),
		pushws.OperationGauge(WebSocketOperations.WithLabelValues(transportWS)),
	)
}

// loaderScope is the pushws.Scope of the gateway's dataloaders: an
// operation's setup has loaders of its own (loaders.Scoped), each response
// new ones (loaders.Fresh), so that no cache outlives what it served.
type loaderScope struct{ svc *domain.Domain }

// Scoped implements pushws.Scope.
func (l loaderScope) Scoped(ctx context.Context) (context.Context, func()) {
	return loaders.Scoped(ctx, l.svc)
}

// Fresh implements pushws.Scope.
func (l loaderScope) Fresh(ctx context.Context) context.Context {
	return loaders.Fresh(ctx, l.svc)
}
