package localgrpc

import (
	"context"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// inprocRoute routes a connection's calls to the Server of this process
// that serves its inproc: name; closing the connection does not stop the
// server. Like a grpc-go client, which dials again, it follows its name
// to the next Server that serves it once its own has stopped.
type inprocRoute struct {
	name string
	conn *callConn
	// bound is the Server the name last led to, with its channel bound
	// to the connection; nil until the name led to one.
	bound atomic.Pointer[boundServer]
}

// newInprocConn is a connection to inproc:name. As a socket client, it
// connects when a call needs a server: one may listen on the name later.
func newInprocConn(name string, cfg clientConfig) *callConn {
	r := &inprocRoute{name: name}
	c := newCallConn(cfg, r)
	r.conn = c
	if srv, _ := lookupOrWait(name); srv != nil {
		r.bound.Store(r.bind(srv))
	}
	return c
}

// boundServer is a Server and the client side of its channel bound to
// a connection: the connection's stats handlers hear the channel's calls
// and its close ends them (see package internal/inprocconn).
type boundServer struct {
	srv    *Server
	cc     grpc.ClientConnInterface
	closed context.Context
}

// bind binds the channel of srv to the connection.
func (r *inprocRoute) bind(srv *Server) *boundServer {
	c := r.conn
	return &boundServer{srv: srv, closed: c.closed, cc: inprocconn.Bind(srv.channel, inprocconn.Conn{Stats: c.stats, Closed: c.closed})}
}

func (b *boundServer) rebind(hs []stats.Handler) grpc.ClientConnInterface {
	return inprocconn.Bind(b.srv.channel, inprocconn.Conn{Stats: hs, Closed: b.closed})
}

// now is the channel of the server the name led to, while it takes calls
// (see Server.takesCalls).
func (r *inprocRoute) now() grpc.ClientConnInterface {
	if b := r.bound.Load(); b != nil && b.srv.takesCalls() {
		return b.cc
	}
	return nil
}

// server is the Server the connection's name leads to: its last one
// while it takes calls, else the one serving the name now (a successor of
// a draining server, as a socket client reconnects on GOAWAY). With none,
// a call fails with Unavailable at once, as over a socket with nothing
// listening, or, if it waits for ready (grpc.WaitForReady), waits for one
// until ctx ends or the connection closes.
func (r *inprocRoute) server(ctx context.Context, wait bool) (*boundServer, error) {
	for {
		cur := r.bound.Load()
		if cur != nil && !cur.srv.stopping.Load() {
			return cur, nil
		}
		next, claimed := lookupOrWait(r.name)
		if next != nil && (cur == nil || next != cur.srv) && !next.stopping.Load() {
			if b := r.bind(next); r.bound.CompareAndSwap(cur, b) {
				return b, nil
			}
			continue // another call moved on first: look again
		}
		if !wait {
			// A stopping server takes no more calls: as over a socket,
			// nothing serves the name.
			return nil, status.Errorf(codes.Unavailable, "localgrpc: no server of this process serves inproc:%s", r.name)
		}
		select {
		case <-claimed:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-r.conn.closed.Done():
			return nil, errConnClosing
		}
	}
}

// ready is the server a call goes to once it serves: a call that waits
// for ready (wait) passes over a server that stopped before it served, as
// a socket client passes over a listener that closed, to its successor.
func (r *inprocRoute) ready(ctx context.Context, wait bool) (destination, error) {
	for {
		b, err := r.server(ctx, wait)
		if err != nil {
			return nil, err
		}
		err = b.srv.awaitServe(ctx, r.conn.closed.Done())
		if err == errNeverServed && wait {
			continue
		}
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}
