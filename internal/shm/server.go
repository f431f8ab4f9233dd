package shm

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// ServerConn is the server side of one connection: it passes each call
// the client opens to a server's channel, bound to the connection (see
// inprocconn.Bind: messages encoded, unary handlers on the call's
// goroutine, the client as the peer), and carries back what the
// handler answers.
type ServerConn struct {
	c       *conn
	cc      grpc.ClientConnInterface
	maxRecv int
	// ctx ends with the connection, with errConnClosed as its cause:
	// the status the channel ends the calls in flight with.
	ctx    context.Context
	cancel context.CancelCauseFunc

	lastID uint32 // the highest stream id the client opened
	goAway atomic.Bool
	calls  sync.WaitGroup
	// workers run the calls, and the goroutines their streams need.
	workers *workers
	// inline are the unary calls opened in the record being read, for
	// the reader to run (see takeInline); only the reader touches it.
	inline []func()
	deny   error
	mu     sync.Mutex
	active int
	// drain: the client opens no more calls after a GoAway (it said so,
	// or did not answer in time); the connection closes once idle.
	drain bool
}

// Serve speaks the framing's hello on nc and serves the client's calls
// through the client side bind returns, given a context that ends with
// the connection (for inprocconn.Conn's Closed: a handler's Send then
// fails as over a connection that closed). Messages over maxRecv bytes
// are refused as the server's channel would. With deny set, every call
// fails with deny's status and never reaches the channel: the client's
// peer credentials were refused. The ServerConn owns nc from then on.
func Serve(nc net.Conn, bind func(closed context.Context) grpc.ClientConnInterface, maxRecv int, deny error, o Options) (*ServerConn, error) {
	c, err := setup(nc, false, o)
	if errors.Is(err, shmwire.ErrHTTP2) {
		refuseHTTP2(nc)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	sc := &ServerConn{c: c, maxRecv: maxRecv, deny: deny}
	sc.ctx, sc.cancel = context.WithCancelCause(context.Background())
	sc.cc = bind(sc.ctx)
	sc.workers = newWorkers(sc.ctx.Done())
	c.onEnded = func() { sc.cancel(errConnClosed) }
	if c.rings != nil {
		c.inline, c.spawn = sc.takeInline, sc.workers.run
	}
	go c.readFrames(sc.onFrame)
	go c.writeCtrl()
	return sc, nil
}

// Done is closed once the connection ended.
func (sc *ServerConn) Done() <-chan struct{} { return sc.c.done }

// Close ends the connection and every call on it, and waits for their
// goroutines.
func (sc *ServerConn) Close() {
	sc.c.fail(net.ErrClosed)
	sc.cancel(errConnClosed)
	<-sc.c.done
	sc.calls.Wait()
	sc.workers.wait()
}

// Abort ends the connection and every call on it, as Close does, without
// waiting for their handlers: a server's Stop does not wait for them.
func (sc *ServerConn) Abort() {
	sc.c.fail(net.ErrClosed)
	sc.cancel(errConnClosed)
}

// GoAway tells the client that no new call is taken; the calls in flight
// go on, those the client opened before it heard included. The client
// answers with a GoAway of its own once it opens no more, behind every
// call it opened; the connection closes once those calls are done.
func (sc *ServerConn) GoAway() {
	if sc.goAway.Swap(true) {
		return
	}
	sc.mu.Lock()
	last := sc.lastID
	sc.mu.Unlock()
	// Aside: a client's calls that wait read the ring, and an idle
	// client's socket reader answers it at once.
	sc.c.writeAside(shmwire.AppendFrame(nil, 0, shmwire.GoAway, 0, (&shmwire.Away{Last: last, Reason: "server stopping"}).Append(nil)))
	// A client that never answers (it is stuck, or a peer of another
	// make) is taken to have opened all it did by then.
	time.AfterFunc(goAwayAnswer, sc.drained)
}

// goAwayAnswer bounds the wait for the client's answer to a GoAway.
const goAwayAnswer = time.Second

// drained says the client opens no more calls: the connection closes as
// soon as none is in flight.
func (sc *ServerConn) drained() {
	sc.mu.Lock()
	sc.drain = true
	idle := sc.active == 0
	sc.mu.Unlock()
	if idle {
		go sc.Close()
	}
}

func (sc *ServerConn) onFrame(f frame) error {
	c := sc.c
	if done, err := c.onFrame(f); done || err != nil {
		return err
	}
	h, p := f.h, f.p
	switch h.Type {
	case shmwire.Headers:
		return sc.open(h.Stream, p)
	case shmwire.Cancel:
		code, err := shmwire.ParseCode(p)
		if err != nil {
			return err
		}
		if s := c.stream(h.Stream); s != nil {
			s.reset(status.New(code, "shm: the client cancelled the call"))
		}
		return nil
	case shmwire.GoAway:
		if _, err := shmwire.ParseAway(p); err != nil {
			return err
		}
		if sc.goAway.Load() {
			sc.drained() // the client's answer: every call it opened came before
		}
		return nil
	}
	return errFrom("a client does not send %v frames", h.Type)
}

// open begins the call the client's Headers frame on id opens.
func (sc *ServerConn) open(id uint32, p []byte) error {
	if id%2 == 0 || id <= sc.lastID {
		return errFrom("the client opened stream %d after %d", id, sc.lastID)
	}
	sc.mu.Lock()
	sc.lastID = id
	sc.mu.Unlock()
	req, err := shmwire.ParseRequest(p)
	if err != nil {
		sc.c.queueCtrl(trailersFrame(id, status.Error(codes.Internal, err.Error()), nil))
		return nil
	}
	if sc.deny != nil {
		sc.c.queueCtrl(trailersFrame(id, sc.deny, nil))
		return nil
	}
	sc.mu.Lock()
	drain := sc.drain
	sc.mu.Unlock()
	if drain {
		sc.c.queueCtrl(trailersFrame(id, status.Error(codes.Unavailable, "shm: the server is stopping and takes no new call"), nil))
		return nil
	}
	s := newStream(sc.c, id, sc.maxRecv)
	// The connection's end reaches the call through the binding's closed
	// context (see Serve), which has the channel end it as a closed
	// connection; a context derived from it would race that with a
	// cancel.
	ctx, cancel := context.WithCancel(context.Background())
	if req.Timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), req.Timeout)
	}
	// A reset from the client ends the call. A stream's handler runs even
	// if the reset came first, as grpc-go's runs once the headers came:
	// its cancel waits until the channel began the call.
	s.onOver = cancel
	var later *laterCancel
	if !req.Unary {
		later = &laterCancel{cancel: cancel}
		s.onOver = later.fire
	}
	sc.c.mu.Lock()
	sc.c.streams[id] = s
	sc.c.mu.Unlock()
	sc.mu.Lock()
	sc.active++
	sc.mu.Unlock()
	sc.calls.Add(1)
	call := func() { sc.serve(ctx, cancel, s, req, later) }
	if req.Unary && sc.c.inline != nil {
		sc.inline = append(sc.inline, call)
		return nil
	}
	sc.workers.run(call)
	return nil
}

// takeInline gives the reader the last unary call its record opened to
// run itself, and has workers run any other.
func (sc *ServerConn) takeInline() func() {
	n := len(sc.inline)
	if n == 0 {
		return nil
	}
	for _, call := range sc.inline[:n-1] {
		sc.workers.run(call)
	}
	last := sc.inline[n-1]
	clear(sc.inline)
	sc.inline = sc.inline[:0]
	return last
}

// laterCancel holds back a cancel until the call it ends has begun.
type laterCancel struct {
	mu      sync.Mutex
	begun   bool
	pending bool
	cancel  context.CancelFunc
}

func (l *laterCancel) fire() {
	l.mu.Lock()
	if !l.begun {
		l.pending = true
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.cancel()
}

// begin lets the cancel through, and fires one held back.
func (l *laterCancel) begin() {
	l.mu.Lock()
	l.begun = true
	pending := l.pending
	l.mu.Unlock()
	if pending {
		l.cancel()
	}
}

// serve runs one call to its end.
func (sc *ServerConn) serve(ctx context.Context, cancel context.CancelFunc, s *stream, req shmwire.Request, later *laterCancel) {
	defer sc.calls.Done()
	defer sc.callDone()
	defer s.end()
	defer cancel()
	if req.MD != nil {
		ctx = metadata.NewOutgoingContext(ctx, req.MD)
	}
	var header, trailer metadata.MD
	// The client's receive limit is the client's channel's to apply.
	opts := []grpc.CallOption{grpc.Header(&header), grpc.Trailer(&trailer), noRecvLimit}
	if req.Subtype != "" {
		opts = append(opts, grpc.CallContentSubtype(req.Subtype))
	}
	if req.Unary {
		sc.serveUnary(ctx, s, req.Method, opts, &header, &trailer)
		return
	}
	sc.serveStream(ctx, s, req.Method, opts, &header, &trailer, later)
}

// errConnClosed ends a call whose connection closed, as grpc-go's
// "transport is closing" does.
var errConnClosed = status.Error(codes.Unavailable, "shm: the connection closed")

var noRecvLimit = grpc.MaxCallRecvMsgSize(math.MaxInt32)

// errCallOver ends the receiving of a call whose handler's side ended.
var errCallOver = status.New(codes.Canceled, "shm: the call ended")

// errLost is what a handler whose client reset the call before its
// request came fails to receive, as grpc-go's does.
var errLost = status.FromContextError(context.Canceled).Err()

func (sc *ServerConn) callDone() {
	sc.mu.Lock()
	sc.active--
	idle := sc.active == 0 && sc.drain
	sc.mu.Unlock()
	if idle {
		go sc.Close()
	}
}

func (sc *ServerConn) serveUnary(ctx context.Context, s *stream, method string, opts []grpc.CallOption, header, trailer *metadata.MD) {
	var msg *inprocconn.Encoded
	for got := false; ; {
		// Every end of the call before its request comes is an event (a
		// reset: the client's cancel, the connection's end), which the
		// call's context, ended with it, would race.
		e, err := s.next(sc.ctx)
		if err != nil {
			return // the connection ended: nobody waits
		}
		if e.kind == evMessage && e.oversize > 0 {
			msg = s.encodedOf(e) // refused at once, as grpc-go's receiver does
			break
		}
		if e.kind == evMessage && !got {
			msg, got = s.encodedOf(e), true
			continue
		}
		if e.kind == evEnd && got {
			break
		}
		switch {
		case e.kind == evReset && !e.conn && !e.refused && !got && e.st.Code() == codes.Canceled:
			// The client reset the call before its request: the handler's
			// side hears of it as over a socket (see inproc's
			// requestLost), in a context the reset has not ended yet.
			var reply inprocconn.Encoded
			sc.cc.Invoke(context.WithoutCancel(ctx), method, &inprocconn.Encoded{Lost: errLost}, &reply, opts...)
		case e.kind != evReset:
			sc.c.queueCtrl(trailersFrame(s.id, status.Error(codes.Internal, "shm: a unary call's request must be one message"), nil))
		}
		return
	}
	var reply inprocconn.Encoded
	err := sc.cc.Invoke(ctx, method, msg, &reply, opts...)
	var head []byte
	if *header != nil {
		head = headersFrame(nil, s.id, *header)
	}
	tail := trailersFrame(s.id, err, *trailer)
	if err != nil {
		sc.c.write(append(head, tail...))
		return
	}
	s.send(sc.ctx, head, bytesOf(reply.Data), tail)
	reply.Data.Free()
}

func (sc *ServerConn) serveStream(ctx context.Context, s *stream, method string, opts []grpc.CallOption, header, trailer *metadata.MD, later *laterCancel) {
	cs, err := sc.cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method, opts...)
	later.begin()
	if err != nil {
		sc.c.write(trailersFrame(s.id, err, *trailer))
		return
	}
	received := make(chan struct{})
	sc.workers.run(func() {
		defer close(received)
		sc.receiveAll(ctx, s, cs)
	})
	// Once the handler's side ended, what the client still sends goes
	// nowhere, as grpc-go's server resets a stream it answered: the
	// receiving ends too.
	defer func() {
		s.reset(errCallOver)
		<-received
	}()
	if md, err := cs.Header(); err == nil && md != nil {
		if sc.c.write(headersFrame(nil, s.id, md)) != nil {
			sc.awaitCallEnd(ctx)
			return
		}
	}
	for {
		var m inprocconn.Encoded
		err := cs.RecvMsg(&m)
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			sc.c.write(trailersFrame(s.id, err, cs.Trailer()))
			return
		}
		err = s.send(sc.ctx, nil, bytesOf(m.Data), nil)
		m.Data.Free()
		if err != nil {
			sc.awaitCallEnd(ctx)
			return
		}
	}
}

// awaitCallEnd waits, taking nothing more from the handler, until the
// call ends: the client's reset cancels the call's context (later), and
// the connection's end ends the call as a closed connection (bind's
// context). Until then the handler's Send waits on a full window, as on
// a socket whose client is gone; had the messages been taken, its Sends
// would have succeeded into a call no one reads.
func (sc *ServerConn) awaitCallEnd(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-sc.ctx.Done():
	}
}

// receiveAll passes the client's messages, then its end, to cs, until the
// call ends.
func (sc *ServerConn) receiveAll(ctx context.Context, s *stream, cs grpc.ClientStream) {
	for {
		e, err := s.next(ctx)
		if err != nil {
			return
		}
		switch e.kind {
		case evMessage:
			if cs.SendMsg(s.encodedOf(e)) != nil {
				return // RecvMsg says why
			}
		case evEnd:
			cs.CloseSend()
			return
		case evReset:
			return // the call's context ends with it
		}
	}
}
