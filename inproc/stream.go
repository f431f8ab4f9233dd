package inproc

import (
	"context"
	"io"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/inproc/internal/handover"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// NewStream begins a streaming call, as grpc.ClientConn does.
func (ch *Channel) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	opts = ch.withDefaults(opts)
	if ch.clientStream != nil {
		return ch.clientStream(ctx, desc, nil, method, ch.newStream, opts...)
	}
	return ch.newStream(ctx, desc, nil, method, opts...)
}

// stream is one streaming call. Its two sides are the views clientStream
// and serverStream; each direction's messages go through a queue.
type stream struct {
	call
	clientCtx  context.Context    // the caller's, after stats tagging
	cancel     context.CancelFunc // ends the handler's context
	desc       *grpc.StreamDesc
	serverDesc *grpc.StreamDesc
	toServer   queue
	toClient   queue

	// The handler's side. status is written once, under mu, before toClient
	// closes: when the handler returns, or earlier when one of its Sends or
	// Receives fails the stream, as grpc-go's server then sends the status
	// at once.
	handlerDone <-chan struct{}
	serverDone  atomic.Bool // the handler returned
	status      *status.Status
	sentTrailer metadata.MD // the trailer as it was when status was sent
	statusDone  atomic.Bool // status and sentTrailer are set, once
	recvd       bool        // the handler received its one request

	// Inline execution: the handler is a coroutine that the client's calls
	// resume when they need it to make progress. drive is held while it
	// runs; waitQueue and waitNeed say what it waits for when suspended.
	inline      bool
	drive       sync.Mutex
	resume      func() (struct{}, bool)
	stopHandler func()
	yield       func(struct{}) bool
	waitQueue   *queue
	waitNeed    need
	clientWants want
	started     bool
	handlerEnd  bool
	coroutineG  uintptr      // the coroutine's goroutine, see onCoroutine
	waiters     atomic.Int32 // client goroutines waiting for the handler
	poked       atomic.Bool  // a goroutine found drive held; see tryDrive
	headerWait  parker       // where Header waits while another drives

	// The client's side.
	cstats     clientStats
	sendClosed bool
	received   bool // the client received its one response
	sawHeader  atomic.Bool
	finishMu   sync.Mutex
	finished   atomic.Bool
	finishErr  error
	stopWatch  func() bool
}

// unaryDesc describes a unary method called through NewStream.
var unaryDesc = &grpc.StreamDesc{}

func (ch *Channel) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ci, err := ch.callInfo(opts)
	if err != nil {
		return nil, err
	}
	s := &stream{desc: desc, cstats: ci.clientStats(ch.cfg.clientStats)}
	s.ch, s.info = ch, ci
	if s.cstats.hs != nil {
		ctx = s.cstats.begin(ctx, method, desc.ClientStreams, desc.ServerStreams)
	}
	s.clientCtx = ctx
	m, err := ch.lookup(method)
	if err != nil {
		// As over a network, the stream opens and its first RecvMsg tells.
		s.finishClient(err)
		return (*clientStream)(s), nil
	}
	if s.md, err = ci.outgoing(ctx, method); err != nil {
		return nil, s.finishClient(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, s.finishClient(status.FromContextError(err).Err())
	}
	if !ch.begin() {
		return nil, s.finishClient(errStopped)
	}
	if s.cstats.hs != nil {
		s.cstats.outHeader(ctx, method, s.md)
	}
	s.method, s.serverDesc = m, unaryDesc
	if m.stream != nil {
		s.serverDesc = m.stream
	}
	s.inline = ch.cfg.execution == Inline
	s.toServer.init(ch.cfg.window, ch.cfg.windowBytes, !s.inline)
	s.toClient.init(ch.cfg.window, ch.cfg.windowBytes, !s.inline)
	if s.inline {
		s.headerWait.init()
	}
	s.headerReady = make(chan struct{})
	var parent context.Context
	if d, ok := ctx.Deadline(); ok {
		parent, s.cancel = context.WithDeadline(ch.base, d)
	} else {
		parent, s.cancel = context.WithCancel(ch.base)
	}
	s.startServer(parent, true)
	if s.inline {
		// Before anything that may end the call can run: ending it stops
		// the coroutine.
		s.resume, s.stopHandler = iter.Pull(s.coroutine)
	}
	// Whatever ends the call ends parent (Stop, the client, the deadline,
	// the handler's return): then every parked side wakes to look.
	context.AfterFunc(parent, s.kick)
	s.handlerDone = s.ctx.Done()
	if ctx.Done() != nil {
		s.finishMu.Lock() // clientCancelled may run before AfterFunc returns
		s.stopWatch = context.AfterFunc(ctx, s.clientCancelled)
		s.finishMu.Unlock()
	}
	if !s.inline {
		go s.serve()
	}
	return (*clientStream)(s), nil
}

// serve runs the handler and ends the handler's side.
func (s *stream) serve() {
	s.finishServer(s.runHandler())
}

func (s *stream) runHandler() error {
	impl, ss := s.method.service.impl, (*serverStream)(s)
	if s.method.unary != nil {
		return s.runUnary(impl, ss)
	}
	h := s.method.stream.Handler
	if s.ch.streamInt == nil {
		return h(impl, ss)
	}
	info := &grpc.StreamServerInfo{FullMethod: s.method.name, IsClientStream: s.serverDesc.ClientStreams, IsServerStream: s.serverDesc.ServerStreams}
	return s.ch.streamInt(impl, ss, info, h)
}

// runUnary serves a unary method called through NewStream.
func (s *stream) runUnary(impl any, ss *serverStream) error {
	resp, err := s.method.unary(impl, s.ctx, ss.RecvMsg, s.ch.unaryInt)
	if err != nil {
		return err
	}
	return ss.SendMsg(resp)
}

// finishServer ends the handler's side once it returned: header if not yet
// sent, status and trailer, then the end of the client's queue.
func (s *stream) finishServer(err error) {
	s.sendStatus(handlerStatus(err))
	s.serverDone.Store(true)
	s.toServer.abandon()
	s.mu.Lock()
	st := s.status
	s.mu.Unlock()
	s.endServer(st)
	s.cancel()
	s.ch.end()
}

// sendStatus ends what the handler sends with st and the trailer set so
// far, unless it already ended; a trailer set later is not sent, as with
// grpc-go.
func (s *stream) sendStatus(st *status.Status) {
	if s.ch.state.Load() == stopped {
		// Over a socket, Stop closed the connection: whatever the
		// handler ends with, its client hears Unavailable.
		st = stoppedStatus
	}
	s.sendHeaderIfNot()
	s.mu.Lock()
	if s.statusDone.Load() {
		s.mu.Unlock()
		return
	}
	s.status, s.sentTrailer = st, s.trailer
	s.statusDone.Store(true) // after them: a reader that sees it sees them
	s.mu.Unlock()
	s.toClient.close()
}

// Errors for what gRPC forbids and a stream cannot survive.
var (
	errConcurrentSend = status.Error(codes.Internal, "inproc: SendMsg called from two goroutines at once on one side of a stream; gRPC allows one sender at a time")
	errConcurrentRecv = status.Error(codes.Internal, "inproc: RecvMsg called from two goroutines at once on one side of a stream; gRPC allows one receiver at a time")
)

// kick wakes every parked side of the stream.
func (s *stream) kick() {
	s.toServer.kick()
	s.toClient.kick()
}

// clientCancelled runs when the client's context ends.
func (s *stream) clientCancelled() {
	defer s.kick() // the handler's context may have ended first, at a deadline
	if s.cancel != nil {
		cancelForClient(s.clientCtx, s.cancel)
	}
	s.finishClient(status.FromContextError(s.clientCtx.Err()).Err())
}

// clientGoneErr is why a client's wait ended early.
func (s *stream) clientGoneErr() error {
	if err := s.clientCtx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return errStopped
}

// finishClient ends the client's side once, with err (io.EOF for a stream
// that ended well), and returns the error the client's calls report from
// then on.
func (s *stream) finishClient(err error) error {
	s.finishMu.Lock()
	if s.finished.Load() {
		err = s.finishErr
		s.finishMu.Unlock()
		return err
	}
	s.finishErr = err
	s.finished.Store(true)
	stopWatch := s.stopWatch
	s.finishMu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	if s.method != nil && !s.serverDone.Load() {
		// The handler's context ends with the call, as over a network; at
		// a deadline, by its own timer, so that it says DeadlineExceeded.
		cancelForClient(s.clientCtx, s.cancel)
		s.toClient.abandon()
		if s.inline {
			s.stopCoroutine()
		}
	}
	endErr := err
	if err == io.EOF {
		endErr = nil
	}
	if s.cstats.hs != nil || s.info.wantsFinish() {
		s.mu.Lock()
		var header, trailer metadata.MD
		if s.headerSent {
			header = s.header
		}
		if s.statusDone.Load() {
			trailer = s.sentTrailer
		}
		s.mu.Unlock()
		if s.cstats.hs != nil {
			s.cstats.end(s.clientCtx, trailer, endErr)
		}
		s.info.finish(header, trailer, endErr)
	}
	return err
}

// noteHeader tells the client's stats handlers of the header, once.
func (s *stream) noteHeader() {
	if s.cstats.hs != nil && s.sawHeader.CompareAndSwap(false, true) {
		s.mu.Lock()
		h := s.header
		s.mu.Unlock()
		s.cstats.inHeader(s.clientCtx, h)
	}
}

// clientStream is the client's side of a stream.
type clientStream stream

var _ grpc.ClientStream = (*clientStream)(nil)

func (c *clientStream) block(q *queue, n need) bool {
	if !c.inline {
		return q.parker(n).park(q, n, nil, c)
	}
	s := (*stream)(c)
	if s.ch.state.Load() == stopped {
		return false // as a parked client is woken by quit
	}
	if s.step(s.wantFor(q, n)) {
		return true
	}
	// The handler waits for what another goroutine of the client must give,
	// or another goroutine is running it: wait for either to make progress.
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	return q.parker(n).park(q, n, s.runnable, c)
}

func (c *clientStream) Context() context.Context { return c.clientCtx }

// ended reports that the client's wait must end: its context ended, the
// channel stopped, or the client's side of the call is over.
func (c *clientStream) ended() bool {
	return c.clientCtx.Err() != nil || c.ch.state.Load() == stopped || c.finished.Load()
}

func (c *clientStream) Header() (metadata.MD, error) {
	s := (*stream)(c)
	if s.method == nil {
		return nil, s.finishErr
	}
	if s.inline {
		if err := s.awaitHeaderInline(); err != nil {
			return nil, err
		}
	}
	select {
	case <-s.headerReady:
	case <-s.clientCtx.Done():
		return nil, s.clientGoneErr()
	case <-s.ch.quit:
		return nil, errStopped
	}
	s.noteHeader()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header.Copy(), nil
}

func (c *clientStream) Trailer() metadata.MD {
	s := (*stream)(c)
	if !s.statusDone.Load() {
		return nil
	}
	return s.sentTrailer.Copy()
}

func (c *clientStream) CloseSend() error {
	if c.clientCtx.Err() != nil {
		// The AfterFunc that tells the handler may not have run yet; an
		// end of input must not reach it first.
		(*stream)(c).clientCancelled()
		return nil
	}
	if !c.sendClosed && c.method != nil {
		c.sendClosed = true
		c.toServer.close()
		(*stream)(c).wakeHandler()
	}
	return nil
}

func (c *clientStream) SendMsg(m any) error {
	s := (*stream)(c)
	if s.sendClosed {
		// As grpc-go, this ends the stream: RecvMsg says so too.
		return s.finishClient(status.Error(codes.Internal, "SendMsg called after CloseSend"))
	}
	if s.method == nil {
		// No such method: as over a network, the message is encoded and
		// goes out, and RecvMsg reports Unimplemented.
		return s.info.checkUnrouted(m)
	}
	if s.finished.Load() || s.ch.state.Load() == stopped {
		return io.EOF // RecvMsg tells why
	}
	if s.clientCtx.Err() != nil {
		s.clientCancelled() // before the message can reach the handler
		return io.EOF
	}
	if !s.toServer.enter(true) {
		return s.finishClient(errConcurrentSend)
	}
	defer s.toServer.leave(true)
	v, n, err := handover.Send(m, s.info.copy.mode(), s.info.codec, s.info.requests(s.ch, s.method))
	if err != nil {
		return s.finishClient(err)
	}
	if s.cstats.hs != nil {
		s.cstats.outPayload(s.clientCtx, m, n)
	}
	if !s.toServer.push(v, uint64(n), c) {
		return io.EOF
	}
	if !s.desc.ClientStreams {
		c.CloseSend()
	} else {
		s.wakeHandler()
	}
	return nil
}

func (c *clientStream) RecvMsg(m any) error {
	s := (*stream)(c)
	if s.finished.Load() {
		return s.finishClient(nil)
	}
	if !s.toClient.enter(false) {
		return s.finishClient(errConcurrentRecv)
	}
	defer s.toClient.leave(false)
	p, ok, aborted := s.toClient.pop(c)
	if aborted {
		return s.finishClient(s.clientGoneErr())
	}
	s.noteHeader()
	if !ok {
		err := s.status.Err()
		if err == nil && !s.desc.ServerStreams && !s.received {
			err = status.Error(codes.Internal, "cardinality violation: received no response message from non-server-streaming RPC")
		}
		if err == nil {
			err = io.EOF
		}
		return s.finishClient(err)
	}
	if !s.desc.ServerStreams {
		// The one response counts only if the call ends well.
		s.received = true
		if _, more, aborted := s.toClient.pop(c); aborted {
			return s.finishClient(s.clientGoneErr())
		} else if more {
			return s.finishClient(status.Error(codes.Internal, "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message"))
		}
		if err := s.status.Err(); err != nil {
			return s.finishClient(err)
		}
	}
	if err := handover.Receive(m, p.v, s.info.codec, &s.method.responses); err != nil {
		return s.finishClient(err)
	}
	if s.cstats.hs != nil {
		s.cstats.inPayload(s.clientCtx, m, int(p.n))
	}
	if !s.desc.ServerStreams {
		s.finishClient(io.EOF)
	}
	return nil
}

// serverStream is the handler's side of a stream.
type serverStream stream

var _ grpc.ServerStream = (*serverStream)(nil)

func (ss *serverStream) block(q *queue, n need) bool {
	if !ss.inline || !(*stream)(ss).onCoroutine() {
		// Isolated, or another goroutine of an Inline handler, which
		// cannot suspend the coroutine: park until the client acts.
		return q.parker(n).park(q, n, nil, ss)
	}
	// Suspend until a client call finds q satisfies n and resumes us; false
	// means the call ended and the handler must return.
	ss.waitQueue, ss.waitNeed = q, n
	return ss.yield(struct{}{})
}

func (ss *serverStream) Context() context.Context { return ss.ctx }

// ended reports that the handler's wait must end: its context ended.
func (ss *serverStream) ended() bool {
	select {
	case <-ss.handlerDone:
		return true
	default:
		return false
	}
}

func (ss *serverStream) SetHeader(md metadata.MD) error { return ss.setHeader(md) }
func (ss *serverStream) SendHeader(md metadata.MD) error {
	if err := ss.sendHeader(md); err != nil {
		return err
	}
	if ss.inline && !ss.handBack(wantHeader) {
		return ss.handlerGoneErr()
	}
	return nil
}
func (ss *serverStream) SetTrailer(md metadata.MD) { ss.setTrailer(md) }

// handlerGoneErr is why a handler's wait ended early.
func (ss *serverStream) handlerGoneErr() error {
	if err := ss.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Canceled, "inproc: the client is gone")
}

// fail ends the call because of err, which one of the handler's Sends or
// Receives met: as grpc-go's server does, the client gets err's status at
// once, its Sends end, and the handler's context ends. It returns err for
// the handler.
func (ss *serverStream) fail(err error) error {
	(*stream)(ss).sendStatus(status.Convert(err))
	ss.toServer.abandon()
	ss.cancel()
	return err
}

func (ss *serverStream) SendMsg(m any) error {
	if ss.serverDone.Load() {
		return status.Error(codes.Internal, "inproc: SendMsg called after the handler returned")
	}
	if ss.statusDone.Load() || ss.ended() {
		// The call failed, or ended for the handler (the client left, the
		// deadline passed, Stop): nothing more goes out, as over a socket.
		return ss.handlerGoneErr()
	}
	if !ss.toClient.enter(true) {
		return ss.fail(errConcurrentSend)
	}
	defer ss.toClient.leave(true)
	ss.sendHeaderIfNot()
	v, n, err := handover.Send(m, ss.info.copy.mode(), ss.info.codec, ss.info.responses(ss.ch, ss.method))
	if err != nil {
		return ss.fail(err)
	}
	if ss.stats != nil {
		ss.stats.handle(ss.ctx, payloadOut(false, m, n))
	}
	if !ss.toClient.push(v, uint64(n), ss) || ss.inline && !ss.handBack(wantMessage) {
		return ss.handlerGoneErr()
	}
	return nil
}

func (ss *serverStream) RecvMsg(m any) error {
	if ss.statusDone.Load() && !ss.serverDone.Load() {
		return ss.handlerGoneErr() // the call failed: nothing more comes in
	}
	if !ss.toServer.enter(false) {
		return ss.fail(errConcurrentRecv)
	}
	defer ss.toServer.leave(false)
	if !ss.serverDesc.ClientStreams {
		return ss.recvOne(m)
	}
	return ss.recv(m)
}

func (ss *serverStream) recv(m any) error {
	p, ok, aborted := ss.toServer.pop(ss)
	if aborted {
		return ss.handlerGoneErr()
	}
	if !ok {
		return io.EOF
	}
	if ss.inline && ss.toServer.worthWaking() && !ss.handBack(wantRoom) {
		return ss.handlerGoneErr()
	}
	if err := handover.Receive(m, p.v, ss.info.codec, &ss.method.requests); err != nil {
		return ss.fail(err)
	}
	if ss.stats != nil {
		ss.stats.handle(ss.ctx, payloadIn(false, m, int(p.n)))
	}
	return nil
}

// recvOne receives the single request of a method that is not client
// streaming, checking that exactly one came, as grpc-go does.
func (ss *serverStream) recvOne(m any) error {
	if ss.recvd {
		return io.EOF
	}
	if err := ss.recv(m); err != nil {
		if err == io.EOF {
			return status.Error(codes.Internal, "cardinality violation: received no request message from non-client-streaming RPC")
		}
		return err
	}
	ss.recvd = true
	if _, more, aborted := ss.toServer.pop(ss); aborted {
		return ss.handlerGoneErr()
	} else if more {
		return status.Error(codes.Internal, "cardinality violation: received multiple request messages for non-client-streaming RPC")
	}
	return nil
}
