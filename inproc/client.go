package inproc

import (
	"context"
	"slices"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc"
)

// client is a client side of a Channel: the Channel's own, or one bound
// to a connection of localgrpc's NewClient (see bind). Its calls report
// to its stats handlers, and a connection's close ends them. A
// connection's settings reach its calls so, as a grpc.ClientConn's own
// do, and not as call options, which a client interceptor would see and
// could drop.
type client struct {
	ch    *Channel
	stats statsHandlers // the channel's client stats handlers, then the connection's
	// closed ends when the connection closes. It is nil for the
	// Channel's own client side, which has no connection to close.
	closed context.Context
}

func init() {
	inprocconn.Bind = func(ch grpc.ClientConnInterface, c inprocconn.Conn) grpc.ClientConnInterface {
		return ch.(*Channel).bind(c)
	}
	inprocconn.Refuses = func(ctx context.Context, opts []grpc.CallOption) error {
		if _, err := newCallInfo(nil, Clone, opts); err != nil {
			return err
		}
		_, err := requestMD(ctx)
		return err
	}
}

// bind returns the client side of ch bound to the connection c.
func (ch *Channel) bind(c inprocconn.Conn) *client {
	hs := statsHandlers(ch.cfg.clientStats)
	if len(c.Stats) > 0 {
		hs = append(slices.Clip(hs), c.Stats...)
	}
	return &client{ch: ch, stats: hs, closed: c.Closed}
}

// Invoke performs a unary call, as Channel.Invoke does: through the
// Channel's default call options and client interceptors.
func (cl *client) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	ch := cl.ch
	opts = ch.withDefaults(opts)
	if ch.clientUnary != nil {
		return ch.clientUnary(ctx, method, req, reply, nil, cl.invoke, opts...)
	}
	return cl.invoke(ctx, method, req, reply, nil, opts...)
}

// NewStream begins a streaming call, as Channel.NewStream does: through
// the Channel's default call options and client interceptors.
func (cl *client) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ch := cl.ch
	opts = ch.withDefaults(opts)
	if ch.clientStream != nil {
		return ch.clientStream(ctx, desc, nil, method, cl.newStream, opts...)
	}
	return cl.newStream(ctx, desc, nil, method, opts...)
}
