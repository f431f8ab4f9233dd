package inproc

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// NewStream begins a streaming call, as grpc.ClientConn does.
func (ch *Channel) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return ch.own.NewStream(ctx, desc, method, opts...)
}

// stream is one streaming call. Its two sides are the views clientStream
// and serverStream; each direction's messages go through a queue. Its life
// is a handful of one-shot signals, drawn in lifecycle.md: every guard of
// a Send, Recv or CloseSend reads them in one switch.
type stream struct {
	call
	run        runner             // runs the handler, as the executor does
	clientCtx  context.Context    // the caller's, after stats tagging
	cancel     context.CancelFunc // ends the handler's context
	desc       *grpc.StreamDesc
	serverDesc *grpc.StreamDesc
	toServer   queue // closed by CloseSend; abandoned when the handler returns
	toClient   queue // closed once statusOut is raised; abandoned when the client's side ends
	// resetByClient says the client left, refusing a message, while an
	// Inline handler it drove waited (see inlineRun.refused): its status
	// no longer reaches the client.
	resetByClient atomic.Bool
	// sentLast says the client called CloseSend.
	sentLast atomic.Bool
	// keptUpTo, once the client's connection closed, counts the messages
	// the handler sent before: the client still receives them (see kept).
	// It is atomic: a call a cancel ended first may be read by its
	// client while the connection's close sets it.
	keptUpTo atomic.Uint64

	// statusOut is raised, under mu, with the status's error once the
	// handler's side sent its status with sentTrailer, the trailer as it
	// was then: when the handler returns, or earlier when one of its Sends
	// or Receives fails the call, as grpc-go's server then sends the
	// status at once. A trailer set later is not sent.
	statusOut   errSignal
	sentTrailer metadata.MD
	// clientStatus is the status as the client receives it (see
	// call.received), set with statusOut.
	clientStatus error
	trailerLost  bool // the client left before statusOut: it gets no trailer
	// handlerReturned is raised once the handler returned.
	handlerReturned signal
	// clientDone is raised once the client's side ended, with the error
	// its calls report from then on (io.EOF: the stream ended well).
	clientDone  errSignal
	endReported atomic.Bool // the client's end went to its stats handlers and call options
	inHeader    atomic.Bool // the client waits in Header() for the header
	recvd       bool        // the handler received its one request

	// The client's side.
	cstats        clientStats
	received      bool // the client received its one response
	sawHeader     atomic.Bool
	watchMu       sync.Mutex  // the stop functions may be read before newStream stored them
	stopWatch     func() bool // stops the watch on the client's context
	stopConnWatch func() bool // stops the watch on its connection's close
}

// unaryDesc describes a unary method called through NewStream.
var unaryDesc = &grpc.StreamDesc{}

func (cl *client) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ch := cl.ch
	ci, err := cl.callInfo(opts)
	if err != nil {
		return nil, ci.unbegun(err)
	}
	md, err := ci.begins(ctx)
	if err != nil {
		return nil, ci.unbegun(err)
	}
	s := ch.exec.newStream()
	s.desc, s.cstats = desc, clientStats{hs: cl.stats}
	s.ch, s.info = ch, ci
	if s.cstats.hs != nil {
		begun := s.cstats.begin(ctx, method, ci.failFast(), desc.ClientStreams, desc.ServerStreams)
		md, err = taggedMD(ctx, begun, md)
		ctx = begun
	}
	s.clientCtx = ctx
	m, lookupErr := ch.lookup(method, false)
	if err != nil {
		return nil, s.finishClient(err)
	}
	if s.md, err = ci.outgoing(ctx, method, md); err != nil {
		if _, ok := err.(*refusedRequest); !ok {
			return nil, s.finishClient(err)
		}
		// The server's transport refuses it before it looks the
		// method up.
		lookupErr = err
	}
	if err := ci.left(ctx); err != nil {
		return nil, s.finishClient(err)
	}
	if !ch.begin(ci.client) {
		return nil, s.finishClient(errStopped)
	}
	if s.cstats.hs != nil {
		s.cstats.outHeader(ctx, cl, method, ci.authority())
	}
	if lookupErr != nil {
		// As over a network, the stream opens, the server answers with
		// its status alone, or resets the stream, and the client's first
		// RecvMsg tells.
		if r, ok := lookupErr.(*refusedRequest); ok {
			s.reset, lookupErr = r.reset, r.err
		} else {
			ch.refuse(ctx, ci, method, s.md)
		}
		s.sendStatus(lookupErr)
		ch.end()
		s.watchClient()
		return (*clientStream)(s), nil
	}
	s.method, s.serverDesc = m, unaryDesc
	if m.stream != nil {
		s.serverDesc = m.stream
	}
	s.toServer.init(ch.cfg.window, ch.cfg.windowBytes)
	s.toClient.init(ch.cfg.window, ch.cfg.windowBytes)
	s.toServer.dir = ci.requests(ch, m, &s.toServer.spare)
	s.toClient.dir = ci.responses(ch, m, &s.toClient.spare)
	var parent context.Context
	if d, ok := ctx.Deadline(); ok {
		parent, s.cancel = context.WithDeadline(ch.base, d)
	} else {
		parent, s.cancel = context.WithCancel(ch.base)
	}
	s.startServer(parent, true)
	if ch.forward.opens(m) {
		s.opened = ch.forward.open(s.ctx)
	}
	// Before anything that may end the call can run: ending it ends the
	// handler, which must have started.
	s.run.start()
	// Whatever ends the call ends parent (Stop, the client, the deadline,
	// the handler's return): then every parked side wakes to look.
	context.AfterFunc(parent, s.parentEnded)
	s.watchClient()
	return (*clientStream)(s), nil
}

// watchClient has the end of the client's context, or the close of its
// connection, end the client's side.
func (s *stream) watchClient() {
	closed := s.info.client.closed
	if s.clientCtx.Done() == nil && closed == nil {
		return
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.clientCtx.Done() != nil {
		s.stopWatch = context.AfterFunc(s.clientCtx, s.clientCancelled)
	}
	if closed != nil {
		s.stopConnWatch = context.AfterFunc(closed, s.connClosed)
	}
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

// finishServer ends the handler's side once it returned with err: header
// if not yet sent, status and trailer, then the end of the client's queue.
func (s *stream) finishServer(err error) {
	st := handlerStatus(err)
	ended := st.Err()
	if ended == nil && st != nil {
		// An error with an OK status goes out as it is (see
		// okStatus), and the stats handlers hear the handler's error
		// (server.go processStreamingRPC).
		ended = err
		s.sendStatus(okStatus{st})
	} else {
		s.sendStatus(ended)
	}
	s.handlerReturned.raise()
	s.toServer.abandon()
	s.mu.Lock()
	heard, trailer := !s.trailerLost, s.sentTrailer
	s.mu.Unlock()
	s.endServer(ended, s.statusOut.cause(), trailer, heard)
	s.cancel()
	s.ch.end()
}

// sendStatus ends what the handler sends with the status err (nil: OK)
// and the trailer set so far, unless it already ended.
func (s *stream) sendStatus(err error) {
	wrote := s.ch.state.Load() != stopped
	if !wrote {
		// Over a socket, Stop closed the connection: whatever the
		// handler ends with, its client hears Unavailable.
		err = errStopped
	}
	// A client that left first never hears of the end: no header, no
	// trailer, as over a socket the stream was reset before they came.
	lost := s.clientDone.isRaised() || s.resetByClient.Load()
	s.headerBeforeStatus(!lost)
	s.mu.Lock()
	first := !s.statusOut.isRaised()
	if first {
		s.trailerLost = lost
		s.sentTrailer = s.trailer
		s.clientStatus = err
		if wrote {
			s.clientStatus, _ = s.arrives(err, s.trailer)
			if s.clientStatus != nil && status.Code(s.clientStatus) == codes.OK {
				s.clientStatus = nil // an OK status the handler returned as an error
			}
		}
		s.statusOut.raise(err)
	}
	s.mu.Unlock()
	if first {
		s.toClient.close()
	}
}

// kick wakes every parked side of the stream.
func (s *stream) kick() {
	s.toServer.kick()
	s.toClient.kick()
}

// parentEnded runs once the parent of the handler's context ended. It
// wakes every parked side. After Stop it has the runner abandon the
// handler too, as a client that leaves does: a handler that waits where
// no parked side can wake it (an Inline one suspended in a Send whose
// client makes no call) must find its call over, as over a socket, where
// Stop fails the handler's blocked write.
func (s *stream) parentEnded() {
	s.kick()
	if s.ch.state.Load() == stopped {
		s.run.abandon()
	}
}

// clientCancelled runs when the client's context ends.
func (s *stream) clientCancelled() {
	s.clientLeft(status.FromContextError(s.clientCtx.Err()).Err())
}

// connClosed runs when the client's connection closes: as grpc-go's
// ClientConn.Close, it ends the call as a cancel does, with its own error.
func (s *stream) connClosed() {
	err := s.info.connErr()
	if s.inHeader.Load() && !s.statusOut.isRaised() {
		// grpc-go's Header() finds its transport closing first and
		// ends the call with Unavailable, wrapping the connection's
		// error; what the caller receives next still says that error
		// (stream.go clientStream.Header).
		s.reportEnd(status.Error(codes.Unavailable, err.Error()))
	}
	if s.desc != nil && s.desc.ServerStreams && !s.statusOut.isRaised() && !s.clientDone.isRaised() {
		// grpc-go's transport puts its error behind the messages its
		// stream's buffer holds: the client still receives what the
		// handler sent before the close, and nothing after it. The
		// handler's context ends (clientLeft) before its blocked Send
		// fails, as a closed connection's does. A call a cancel
		// ended first keeps nothing: its client was told it ended.
		s.keptUpTo.Store(s.toClient.tail.Load() &^ busy)
	}
	s.clientLeft(err)
}

// receiveKept gives m the next of what the handler sent before the
// client's connection closed that the client has not received yet, and
// reports whether there was one. It receives inside the receiver's guard,
// as RecvMsg does: a copy it releases goes to the stream's Spare, which
// takes one giver at a time.
func (s *stream) receiveKept(m any) (bool, error) {
	upTo := s.keptUpTo.Load()
	if upTo == 0 || !s.toClient.enterReceive() {
		return false, nil
	}
	defer s.toClient.leaveReceive()
	p, ok := s.toClient.take(upTo)
	if !ok {
		return false, nil
	}
	return true, s.take(m, p)
}

// clientLeft ends the client's side with err because the client left. A
// stream whose status is out had its whole answer reach the client: as
// over a socket, where a cancel comes behind what the client's buffer
// holds and ends nothing once the trailers came, the client still
// receives all of it and the status.
func (s *stream) clientLeft(err error) {
	defer s.kick() // the handler's context may have ended first, at a deadline
	if s.statusOut.isRaised() {
		// grpc-go's client still ends the call for its stats handlers
		// and call options with the cancel, at once.
		s.reportEnd(err)
		return
	}
	// The client's side ends before the handler's context does, so that a
	// handler that returns at once finds its client gone: its trailer is
	// then lost, as over a socket.
	s.finishClient(err)
	if s.cancel != nil {
		cancelForClient(s.clientCtx, s.cancel)
	}
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
	if !s.clientDone.raise(err) {
		return s.clientDone.cause()
	}
	s.watchMu.Lock()
	stopWatch, stopConnWatch := s.stopWatch, s.stopConnWatch
	s.watchMu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	if stopConnWatch != nil {
		stopConnWatch()
	}
	if s.method != nil && !s.handlerReturned.isRaised() {
		// The handler's context ends with the call, as over a network; at
		// a deadline, by its own timer, so that it says DeadlineExceeded.
		cancelForClient(s.clientCtx, s.cancel)
		s.toClient.abandon()
		s.run.abandon()
	}
	s.reportEnd(err)
	return err
}

// reportEnd tells the client's stats handlers and call options of the
// call's end, with err (io.EOF: it ended well), once.
func (s *stream) reportEnd(err error) {
	if !s.endReported.CompareAndSwap(false, true) {
		return
	}
	endErr := err
	if err == io.EOF {
		endErr = nil
	}
	if s.cstats.hs != nil || s.info.wantsFinish() {
		s.mu.Lock()
		var header, trailer metadata.MD
		if s.headerOut.isRaised() {
			header = s.clientHeader()
		}
		if s.statusOut.isRaised() {
			trailer = s.clientTrailerLocked()
		}
		s.mu.Unlock()
		if s.cstats.hs != nil {
			s.cstats.inTrailer(s.clientCtx, trailer)
			s.cstats.end(s.clientCtx, trailer, endErr)
		}
		s.info.finish(header, trailer, endErr)
	}
}

// clientTrailerLocked is the trailer as the client received it, once
// statusOut is raised; s.mu is held. None reached a client that left
// first, or that refused the header or the trailer (see call.arrives).
func (s *stream) clientTrailerLocked() metadata.MD {
	if s.trailerLost || s.trailerFails(s.statusOut.cause(), s.sentTrailer) != nil {
		return nil
	}
	return s.clientTrailer(s.sentTrailer, s.statusOut.cause())
}

// noteHeader tells the client's stats handlers of the header, once, if
// one came and the client's side has not ended.
func (s *stream) noteHeader() {
	if s.cstats.hs == nil || s.clientDone.isRaised() || !s.sawHeader.CompareAndSwap(false, true) {
		return
	}
	s.mu.Lock()
	h, trailersOnly := s.clientHeader(), s.trailersOnly
	s.mu.Unlock()
	if !trailersOnly {
		s.cstats.inHeader(s.clientCtx, h)
	}
}
