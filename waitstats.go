package localgrpc

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// waitStats reports an in-process call to its client's stats handlers
// while it waits for a server, where no channel can: grpc-go's client
// tags and begins a call before it picks a connection, and ends it there
// if it gets none.
type waitStats struct {
	hs    []stats.Handler
	begin time.Time
	// ended says a channel that took the call reported its End.
	ended atomic.Bool
}

// beginWait tags ctx for the client stats handlers hs, and tells them
// that a call of method begins, failing fast unless it waits for ready;
// desc is nil for a unary call. With no handlers, it returns ctx and nil.
func beginWait(ctx context.Context, method string, desc *grpc.StreamDesc, failFast bool, hs []stats.Handler) (context.Context, *waitStats) {
	if hs == nil {
		return ctx, nil
	}
	w := &waitStats{hs: hs, begin: time.Now()}
	for _, h := range hs {
		ctx = h.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method, FailFast: failFast})
	}
	b := &stats.Begin{Client: true, BeginTime: w.begin, FailFast: failFast}
	if desc != nil {
		b.IsClientStream, b.IsServerStream = desc.ClientStreams, desc.ServerStreams
	}
	w.handle(ctx, b)
	return ctx, w
}

func (w *waitStats) handle(ctx context.Context, s stats.RPCStats) {
	for _, h := range w.hs {
		h.HandleRPC(ctx, s)
	}
}

// end tells the handlers that the call ended with err, no server having
// taken it. As grpc-go's, the End carries no trailer: none came.
func (w *waitStats) end(ctx context.Context, err error) {
	w.handle(ctx, &stats.End{Client: true, BeginTime: w.begin, EndTime: time.Now(), Error: err})
}

// taken tells the handlers that a server took the call after it waited,
// as grpc-go's client tells them once a delayed pick completes. It
// returns the handlers for the channel that carries the rest of the
// call, each as begun.
func (w *waitStats) taken(ctx context.Context) []stats.Handler {
	w.handle(ctx, &stats.DelayedPickComplete{})
	hs := make([]stats.Handler, len(w.hs))
	for i, h := range w.hs {
		hs[i] = begun{h, w}
	}
	return hs
}

// failed ends the call, failed with err by the channel that took it, if
// that channel did not: one fails a call it refuses before it would
// begin it (its context ended, say) with no stats event, and this call
// began as it waited. A nil w or err does nothing.
func (w *waitStats) failed(ctx context.Context, err error) {
	if w != nil && err != nil && !w.ended.Load() {
		w.end(ctx, err)
	}
}

// begun is a client stats handler as the channel that carries a call
// taken after a wait sees it. The call was tagged and begun before it
// waited, in the context the channel gets, so the channel's TagRPC and
// Begin are not heard again; its End says when the call began.
type begun struct {
	stats.Handler
	w *waitStats
}

func (b begun) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (b begun) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s := s.(type) {
	case *stats.Begin:
	case *stats.End:
		b.w.ended.Store(true)
		e := *s
		e.BeginTime = b.w.begin
		b.Handler.HandleRPC(ctx, &e)
	default:
		b.Handler.HandleRPC(ctx, s)
	}
}
