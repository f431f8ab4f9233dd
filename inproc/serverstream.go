package inproc

import (
	"context"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// serverStream is the handler's side of a stream.
type serverStream stream

var _ grpc.ServerStream = (*serverStream)(nil)

func (ss *serverStream) block(q *queue, n need, first bool) bool {
	return ss.run.handlerWait(q, n, first)
}

func (ss *serverStream) Context() context.Context { return ss.ctx }

// ended reports that the handler's context ended: its wait must end, and
// nothing more it sends goes out. Err says so by an atomic load, where a
// select on Done took two calls.
func (ss *serverStream) ended() bool {
	return ss.ctx.Err() != nil
}

// SetHeader and SendHeader check md as grpc-go's serverStream does
// (imetadata.Validate), which grpc.SetHeader and grpc.SendHeader do not.
func (ss *serverStream) SetHeader(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	if err := validateMetadata(md); err != nil {
		return err
	}
	return ss.setHeader(md)
}

func (ss *serverStream) SendHeader(md metadata.MD) error {
	if err := validateMetadata(md); err != nil {
		return err
	}
	if err := ss.sendHeader(md); err != nil {
		return err
	}
	if !ss.run.handed(wantHeader) {
		return ss.writeGone(ss.handlerGoneErr())
	}
	return nil
}
func (ss *serverStream) SetTrailer(md metadata.MD) { ss.setTrailer(md) }

// handlerGoneErr is why a handler's wait ended early.
func (ss *serverStream) handlerGoneErr() error {
	if err := ss.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return errClientGone
}

// fail ends the call because of err, which one of the handler's Sends or
// Receives met: as grpc-go's server does, the client gets err's status at
// once, its Sends end, and the handler's context ends. It returns err for
// the handler.
func (ss *serverStream) fail(err error) error {
	(*stream)(ss).sendStatus(status.Convert(err).Err())
	ss.toServer.abandon()
	ss.cancel()
	return err
}

func (ss *serverStream) SendMsg(m any) error {
	switch {
	case ss.handlerReturned.isRaised():
		return errSendAfterReturn
	case ss.statusOut.isRaised() || ss.ended():
		// The call failed, or ended for the handler (the client left, the
		// deadline passed, Stop): nothing more goes out, as over a socket.
		return ss.writeGone(ss.handlerGoneErr())
	}
	t, ok := ss.toClient.enterSend()
	if !ok {
		return ss.fail(errConcurrentSend)
	}
	defer ss.toClient.leaveSend(t)
	v, n, err := ss.toClient.dir.Send(m)
	if err != nil {
		// Before the header: grpc-go's server checks a message before it
		// writes anything, and a handler that set no header then ends
		// with trailers only.
		return ss.fail(err)
	}
	ss.sendHeaderIfNot()
	if ss.stats != nil {
		ss.stats.handle(ss.ctx, payloadOut(false, m, n))
	}
	if !ss.toClient.push(t, v, uint64(n), ss) || !ss.run.handed(wantMessage) {
		return ss.writeGone(ss.handlerGoneErr())
	}
	return nil
}

func (ss *serverStream) RecvMsg(m any) error {
	if ss.statusOut.isRaised() && !ss.handlerReturned.isRaised() {
		return ss.handlerGoneErr() // the call failed: nothing more comes in
	}
	if !ss.toServer.enterReceive() {
		return ss.fail(errConcurrentRecv)
	}
	defer ss.toServer.leaveReceive()
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
	if !ss.run.handed(wantRoom) {
		return ss.handlerGoneErr()
	}
	if err := ss.toServer.dir.Receive(m, p.v); err != nil {
		return ss.fail(err)
	}
	ss.toServer.dir.Release(p.v)
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
			return errNoRequest
		}
		return err
	}
	ss.recvd = true
	if _, more, aborted := ss.toServer.pop(ss); aborted {
		return ss.handlerGoneErr()
	} else if more {
		return errExtraRequest
	}
	return nil
}
