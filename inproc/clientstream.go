package inproc

import (
	"context"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// clientStream is the client's side of a stream.
type clientStream stream

var _ grpc.ClientStream = (*clientStream)(nil)

func (c *clientStream) block(q *queue, n need, first bool) bool {
	return c.run.clientWait(q, n, first)
}

func (c *clientStream) Context() context.Context { return c.clientCtx }

// ended reports that the client's wait must end: its context ended, the
// channel stopped, or the client's side of the call is over.
func (c *clientStream) ended() bool {
	return c.clientCtx.Err() != nil || c.ch.state.Load() == stopped || c.clientDone.isRaised()
}

// Header waits for the header. As grpc-go's, it reports no error: a
// stream that ends first, or ended with trailers only, ends the client's
// side with why, which RecvMsg reports, and Header returns nil.
func (c *clientStream) Header() (metadata.MD, error) {
	s := (*stream)(c)
	s.inHeader.Store(true)
	defer s.inHeader.Store(false)
	if err := s.run.awaitHeader(); err != nil {
		s.finishClient(err)
		return nil, nil
	}
	if !s.headerOut.isRaised() {
		select {
		case <-s.headerOut.done():
		case <-s.clientCtx.Done():
			s.finishClient(s.clientGoneErr())
			return nil, nil
		case <-s.clientDone.done(): // its connection closed, say
			return nil, nil
		case <-s.ch.quit:
			s.finishClient(errStopped)
			return nil, nil
		}
	}
	s.mu.Lock()
	trailersOnly, unheard := s.trailersOnly, s.headerUnheard
	s.mu.Unlock()
	if unheard {
		return nil, nil // the client left before it came: the call's end says why
	}
	if trailersOnly {
		// headerBeforeStatus set it before raising headerOut, and
		// statusOut follows at once.
		if !s.statusOut.isRaised() {
			<-s.statusOut.done()
		}
		if err := s.clientStatus; err != nil {
			s.finishClient(err)
		} else {
			s.finishClient(io.EOF)
		}
		return nil, nil
	}
	if err := s.headerError(); err != nil {
		s.finishClient(err)
		return nil, nil
	}
	s.noteHeader()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientHeader(), nil
}

func (c *clientStream) Trailer() metadata.MD {
	s := (*stream)(c)
	if !s.statusOut.isRaised() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientTrailerLocked()
}

// CloseSend ends the client's input, unless the client's side ended
// first. As over a socket, where a call the client ended (a Send it
// refused, say) was reset and no end of input follows, the handler then
// finds its call over, never a clean end of input, which would pass a
// truncated request for a whole one.
func (c *clientStream) CloseSend() error {
	// As grpc-go's, a SendMsg after it says so, whatever ended the call.
	c.sentLast.Store(true)
	if c.clientCtx.Err() != nil {
		// The AfterFunc that tells the handler may not have run yet; an
		// end of input must not reach it first.
		(*stream)(c).clientCancelled()
		return nil
	}
	if c.clientDone.isRaised() {
		return nil
	}
	if !c.toServer.closed.Load() {
		c.toServer.close()
		c.run.fed()
	}
	return nil
}

func (c *clientStream) SendMsg(m any) error {
	s := (*stream)(c)
	switch {
	case s.toServer.closed.Load() || s.sentLast.Load():
		// As grpc-go, this ends the stream, if it has not ended:
		// RecvMsg says so too. Either way SendMsg says what went wrong.
		s.finishClient(errSendAfterCloseSend)
		return errSendAfterCloseSend
	case s.clientDone.isRaised() || s.ch.state.Load() == stopped:
		return io.EOF // RecvMsg tells why
	case s.method == nil:
		return c.sendUnrouted(m)
	case s.clientCtx.Err() != nil:
		s.clientCancelled() // before the message can reach the handler
		return io.EOF
	}
	t, ok := s.toServer.enterSend()
	if !ok {
		return s.finishClient(errConcurrentSend)
	}
	defer s.toServer.leaveSend(t)
	v, n, err := s.toServer.dir.Send(m)
	if err != nil {
		return s.finishClient(err)
	}
	if s.cstats.hs != nil {
		s.cstats.outPayload(s.clientCtx, m, n)
	}
	if !s.toServer.push(t, v, uint64(n), c) {
		return io.EOF
	}
	if !s.desc.ClientStreams {
		c.CloseSend()
	} else {
		s.run.fed()
	}
	return nil
}

// sendUnrouted sends m on a stream to a method the channel does not
// have. As over a network, the message is encoded and goes out before
// the client hears the status, which RecvMsg reports.
func (c *clientStream) sendUnrouted(m any) error {
	s := (*stream)(c)
	n, err := s.info.checkUnrouted(m)
	if err != nil {
		return s.finishClient(err)
	}
	if s.cstats.hs != nil {
		s.cstats.outPayload(s.clientCtx, m, n)
	}
	if !s.desc.ClientStreams {
		c.CloseSend()
	}
	return nil
}

func (c *clientStream) RecvMsg(m any) error {
	s := (*stream)(c)
	if s.clientDone.isRaised() {
		if ok, err := s.receiveKept(m); ok {
			return err
		}
		return s.clientDone.cause()
	}
	if s.clientCtx.Err() != nil && !s.statusOut.isRaised() {
		// The AfterFunc that ends the client's side may not have run yet:
		// a client that keeps receiving must not get what was queued
		// after its cancel. (Once the status is out, the whole answer
		// had reached it: see clientCancelled.)
		s.clientCancelled()
		return s.clientDone.cause()
	}
	if !s.toClient.enterReceive() {
		return s.finishClient(errConcurrentRecv)
	}
	defer s.toClient.leaveReceive()
	p, ok, aborted := s.toClient.pop(c)
	if aborted {
		return s.finishClient(s.clientGoneErr())
	}
	// The header came before what pop gave: a client that refuses it
	// gets nothing after it.
	if err := s.headerError(); err != nil {
		return s.finishClient(err)
	}
	s.noteHeader()
	if !ok {
		err := s.clientStatus // statusOut is raised: the queue closed after it
		if err == nil && !s.desc.ServerStreams && !s.received {
			err = errNoResponse
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
			return s.finishClient(errExtraResponse)
		}
		if err := s.clientStatus; err != nil { // the queue closed after statusOut
			return s.finishClient(err)
		}
	}
	if err := s.take(m, p); err != nil {
		return err
	}
	if !s.desc.ServerStreams {
		s.finishClient(io.EOF)
	}
	return nil
}

// take gives m the message of p.
func (s *stream) take(m any, p parcel) error {
	if err := s.toClient.dir.Receive(m, p.v); err != nil {
		s.run.refused()
		return s.finishClient(err)
	}
	s.toClient.dir.Release(p.v)
	if s.cstats.hs != nil {
		s.cstats.inPayload(s.clientCtx, m, int(p.n))
	}
	return nil
}
