package server

import (
	"context"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/server/pushws"
	"github.com/weibohbase/gateway/weibo/domain"
)

// newPushWS returns the graphql-transport-ws transport of cfg: the Origin
// policy of CORSOrigins, the token of connection_init (wsInit), the
// executor's error presenter, MaxBodyBytes as a message's bound, and the
// dataloaders of loaderScope.
func newPushWS(cfg Config) *pushws.Transport {
	return pushws.New(
		pushws.CheckOrigin(newOriginPolicy(cfg.CORSOrigins).checkWebSocket),
		pushws.InitFunc(wsInit(cfg.Tokens)),
		pushws.ErrorPresenter(errorPresenter(cfg.Logger)),
		pushws.MaxMessageBytes(int(cfg.MaxBodyBytes)),
		pushws.OperationScope(loaderScope{svc: cfg.Svc}),
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
