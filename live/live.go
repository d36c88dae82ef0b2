// Package live lets a push transport drive a GraphQL subscription without a
// goroutine of its own per subscription.
//
// gqlgen runs a subscription by receiving from the channel its resolver
// returned, so a transport that follows it parks one goroutine per
// subscription while nothing happens. A transport that puts a Sink into the
// subscription's context instead hands the receiving to the subscription's
// source: the source sends a value on a channel with room for it (capacity
// 1), or closes the channel, and then calls Sink.Emit, which receives the
// value at once (gqlgen's response handler), writes it to the client and
// returns. Between events no goroutine waits for the transport.
package live

import "context"

// Sink is a push transport's end of one subscription.
type Sink interface {
	// Take tells the transport that the source will call Emit; without
	// it the transport receives from the channel itself.
	Take()
	// Emit tells the transport that the subscription's channel holds its
	// next value, or is closed: the transport receives it before Emit
	// returns. It is called by one goroutine at a time, after each send
	// and once after the close.
	Emit()
	// Fail records err as the subscription's end: the transport presents
	// it as every GraphQL error (extensions.code) and sends it (a
	// graphql-transport-ws "error" message) instead of "complete" once the
	// channel is closed.
	Fail(err error)
	// End fails the subscription with err (Fail) and cancels the context
	// its source runs in, which then closes its channel and calls Emit.
	End(err error)
}

type sinkKey struct{}

// WithSink returns ctx carrying s, for the subscription resolved in it.
func WithSink(ctx context.Context, s Sink) context.Context {
	return context.WithValue(ctx, sinkKey{}, s)
}

// Take returns the Sink of ctx's subscription, taken (Sink.Take): the
// caller, a source about to deliver its values, must then call Emit after
// each send and after the close (Out does). Nil without a push transport:
// then the transport receives, and a send blocks until it does.
func Take(ctx context.Context) Sink {
	s := SinkOf(ctx)
	if s != nil {
		s.Take()
	}
	return s
}

// SinkOf returns the Sink of ctx's subscription; nil when the transport
// receives from the channel itself (then a send blocks until it does).
func SinkOf(ctx context.Context) Sink {
	s, _ := ctx.Value(sinkKey{}).(Sink)
	return s
}

// Out is a source's end of a subscription: the channel its resolver
// returns and, under a push transport, the Sink it delivers to.
type Out[T any] struct {
	// C is the channel: with room for one value under a push transport
	// (Emit takes it), without room otherwise.
	C    chan T
	sink Sink
}

// NewOut makes the channel of ctx's subscription, taking its Sink (Take).
func NewOut[T any](ctx context.Context) Out[T] {
	if s := Take(ctx); s != nil {
		return Out[T]{C: make(chan T, 1), sink: s}
	}
	return Out[T]{C: make(chan T)}
}

// Sent is called after each send on C: under a push transport the value
// is delivered before it returns.
func (o Out[T]) Sent() {
	if o.sink != nil {
		o.sink.Emit()
	}
}

// Close closes C. Under a push transport it first fails the subscription
// with err when err is not nil (without one the source reports err its
// own way), and the transport takes the close before Close returns.
func (o Out[T]) Close(err error) {
	if o.sink != nil && err != nil {
		o.sink.Fail(err)
	}
	close(o.C)
	if o.sink != nil {
		o.sink.Emit()
	}
}
