package inproc

import (
	"context"
	"io"
	"reflect"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Invoke performs a unary call, as grpc.ClientConn does.
func (ch *Channel) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	return ch.own.Invoke(ctx, method, req, reply, opts...)
}

// unaryCall is one unary call: the handler's side and the request's
// hand-over to it.
type unaryCall struct {
	call
	uctx    unaryContext // the handler's context's parent
	req     any          // what send made of the client's request
	reqSize int
	handoff // the result, and Isolated's signal of it (isolated.go); here rather than on its own, which would cost the default mode an allocation
}

// unaryResult is what a unary handler gives its client: its response, or
// the status it ended with.
type unaryResult struct {
	resp any
	err  error
	// size is resp's size once sent: below 2 GiB, as every gRPC limit
	// is. An int32 keeps handoff small.
	size int32
	// sent says the handler's side sent the response (see finish): resp
	// is what send made of it. Otherwise resp is the response as the
	// handler returned it, and the client sends it (sendFor).
	sent bool
	left bool // the client left before it took the result: err says why
	// wrote says the status went to the client as the handler's side
	// wrote it, with the header and trailer: nothing ended the call for
	// the handler first (the client's leaving, its connection's close,
	// the deadline, Stop). Otherwise nothing of the end reaches the
	// client (see unaryCall.unheard).
	wrote bool
}

func (cl *client) invoke(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) (err error) {
	ch := cl.ch
	m, lookupErr := cl.lookupUnary(method)
	if m != nil && m.unary == nil {
		return cl.invokeStream(ctx, method, req, reply, opts)
	}
	ci, err := cl.callInfo(opts)
	if err != nil {
		return ci.unbegun(err)
	}
	md, err := ci.begins(ctx)
	if err != nil {
		return ci.unbegun(err)
	}
	cs := clientStats{hs: cl.stats}
	if cs.hs != nil {
		begun := cs.begin(ctx, method, ci.failFast(), false, false)
		md, err = taggedMD(ctx, begun, md)
		ctx = begun
	}
	var header, trailer metadata.MD
	// inHandler is true while the executor runs the handler, whose panic,
	// Inline, unwinds through here: the call then ends with Internal.
	inHandler := false
	if cs.hs != nil || ci.wantsFinish() {
		// Most calls have no one to tell of their end, and a deferred
		// call costs them even when it does nothing.
		defer func() {
			if inHandler {
				err = errHandlerPanicked
			}
			if cs.hs != nil {
				cs.end(ctx, trailer, err)
			}
			if ci.wantsFinish() {
				ci.finish(header, trailer, err)
			}
		}()
	}
	if err != nil {
		return err
	}
	if md, err = ci.outgoing(ctx, method, md); err != nil {
		if _, ok := err.(*refusedRequest); !ok {
			return err
		}
		// The server's transport refuses it before it looks the
		// method up.
		lookupErr, err = err, nil
	}
	if cs.hs != nil {
		cs.outHeader(ctx, cl, method, ci.authority())
	}
	var v any
	var n int
	if lookupErr == nil {
		requests := ci.requests(ch, m, nil)
		v, n, err = requests.Send(req)
	} else {
		// As over a network, the request is encoded and sent before the
		// server can say it has no such method.
		n, err = ci.checkUnrouted(req)
	}
	if err != nil {
		if lookupErr == nil {
			ch.requestLost(ctx, ci, m, md)
		}
		return err
	}
	if cs.hs != nil {
		cs.outPayload(ctx, req, n)
	}
	if err := ci.left(ctx); err != nil {
		return err
	}
	if !ch.begin(ci.client) {
		return errStopped
	}
	if lookupErr != nil {
		r, refused := lookupErr.(*refusedRequest)
		if refused {
			lookupErr = r.err
		} else {
			ch.refuse(ctx, ci, method, md)
		}
		ch.end()
		if !refused || !r.reset {
			// The status came alone: trailers only, with the
			// content-type.
			trailer = toResponse(nil, ci.contentType())
			if cs.hs != nil {
				cs.inTrailer(ctx, trailer)
			}
		}
		return wireStatus(lookupErr, nil)
	}
	u := &unaryCall{call: call{ch: ch, method: m, info: ci, md: md}, req: v, reqSize: n}
	inHandler = true
	r := cl.unaryExec.invoke(ctx, u)
	inHandler = false
	if r.left {
		return r.err
	}
	if !r.wrote {
		return u.unheard()
	}
	size := int(r.size)
	var recvErr error // the client's refusal of the response
	switch {
	case r.err == nil && !r.sent:
		size, r.err, recvErr = u.sendFor(reply, r.resp)
	case r.err == nil && !u.headerBad:
		responses := ci.responses(ch, m, nil)
		recvErr = responses.Receive(reply, r.resp)
	}
	// The status as the client takes it from the header and trailer.
	endErr, trailerArrived := u.arrives(r.err, u.trailer)
	if cs.hs != nil || ci.wantsFinish() {
		header = u.clientHeader()
		if trailerArrived {
			trailer = u.clientTrailer(u.trailer, r.err)
		}
	}
	if cs.hs != nil {
		if header != nil {
			cs.inHeader(ctx, header)
		}
		// Before the response, as grpc-go's client most often reports
		// them: its transport reads the trailer's frame right after the
		// response's, before the caller it woke reports the response.
		cs.inTrailer(ctx, trailer)
	}
	if r.err != nil || u.headerBad {
		// No response, or none past a header the client refused.
		if endErr == nil || r.err != nil && status.Code(endErr) == codes.OK {
			// An OK status without the response (see okStatus).
			return errNoResponse
		}
		return endErr
	}
	if recvErr != nil {
		return recvErr
	}
	if cs.hs != nil {
		cs.inPayload(ctx, reply, size)
	}
	// The response came, and then the trailer: the call may still fail
	// at it, as grpc-go's client's second read for the end fails.
	return endErr
}

// okStatus is a handler's error whose status is OK, as it goes out:
// grpc-go's server writes that status, message and details, with no
// response, and its client, which finds no response before an OK status,
// fails the call (see errNoResponse).
type okStatus struct{ st *status.Status }

func (e okStatus) Error() string              { return e.st.Message() }
func (e okStatus) GRPCStatus() *status.Status { return e.st }

// unheard is how a call whose handler's end never reached its client
// ends for the client, which took the result before it noticed why: as
// over a socket, where neither header nor trailer came, with what the
// client would notice first. That is Unavailable after Stop, the
// connection's error once its connection closed, and otherwise the
// deadline, which the handler's context noticed first: a client that
// left took no result (see unaryResult.left).
func (u *unaryCall) unheard() error {
	switch {
	case u.ch.state.Load() == stopped:
		return errStopped
	case u.info.connClosed():
		return u.info.connErr()
	}
	return status.FromContextError(context.DeadlineExceeded).Err()
}

// sendFor does on the client's goroutine what the handler's side left
// to it (see finish): it checks resp, the response the handler handed
// over as it returned it, against the server's send limit and its
// encoding, and copies it straight into reply; then it sends the header,
// which grpc-go's server writes only once the response passed those
// checks, or the status of their refusal, with trailers only if the
// handler set no header. It returns the response's size, the server's
// refusal (the call's status), and the client's own (its receive limit,
// the decoding).
func (u *unaryCall) sendFor(reply, resp any) (size int, refused, recvErr error) {
	if (u.headerBad || !u.headerOut.isRaised() && wireError(u.header) != nil) && reflect.TypeOf(reply).Kind() == reflect.Pointer {
		// The client refuses the header and never reads the
		// response: it goes to a message of its own.
		reply = reflect.New(reflect.TypeOf(reply).Elem()).Interface()
	}
	responses := u.info.responses(u.ch, u.method, nil)
	size, refused, recvErr = responses.Transfer(reply, resp)
	if refused != nil {
		u.headerBeforeStatus(true)
		return size, refused, nil
	}
	u.sendHeaderIfNot()
	return size, nil, recvErr
}

// cancelForClient ends a handler's context because the client's ended.
// A deadline is left to the handler's own timer, so the handler sees
// DeadlineExceeded, as over a network.
func cancelForClient(client context.Context, cancel func()) {
	if client.Err() != context.DeadlineExceeded {
		cancel()
	}
}

// handle runs the handler. Its decoder is a closure allocated on every
// call, as grpc-go's is: the handler's signature leaves no other way to
// tell it whose request to take. It is written out here, as the method
// value u.decode would call through a wrapper.
func (u *unaryCall) handle() (any, error) {
	decode := func(in any) error {
		requests := u.info.requests(u.ch, u.method, nil)
		if err := requests.Receive(in, u.req); err != nil {
			return err
		}
		if u.stats != nil {
			u.stats.handle(u.ctx, payloadIn(false, in, u.reqSize))
		}
		return nil
	}
	return u.method.unary(u.method.service.impl, u.ctx, decode, u.ch.unaryInt)
}

// invokeStream makes a unary call to a streaming method, as grpc-go does:
// one message each way.
func (cl *client) invokeStream(ctx context.Context, method string, req, reply any, opts []grpc.CallOption) error {
	s, err := cl.newStream(ctx, &grpc.StreamDesc{}, nil, method, opts...)
	if err != nil {
		return err
	}
	if err := s.SendMsg(req); err != nil && err != io.EOF {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	return s.RecvMsg(reply)
}

// finish ends the handler's side, and leaves what its client takes in
// u.result: the header goes out if it has not, and the stats handlers
// hear of the end. The executor counts the call out
// (Channel.end) once the result is where the client takes it from, so
// that a GracefulStop the count ends cannot beat the result there. The
// response is handed over as returned, for the client to check and copy
// on its own goroutine (the handler's is new, with a small stack, and the
// copy would grow it), unless stats handlers must hear of it as sent;
// then the client sends the header too (sendFor).
func (u *unaryCall) finish(resp any, err error) {
	if err == nil && u.stats == nil && u.uctx.Err() == nil {
		// Most calls': nothing goes out but the response, left to the
		// client, and nothing ended the call first.
		stopping := u.ch.state.Load() == stopped
		u.uctx.end()
		u.result.resp, u.result.wrote = resp, !stopping
		return
	}
	u.result = u.finishInFull(resp, err)
}

// finishInFull is finish for a call with a status to send, stats handlers
// to tell, or an end that came first.
func (u *unaryCall) finishInFull(resp any, err error) unaryResult {
	st := handlerStatus(err)
	// The handler's context ended if the client left, the deadline
	// passed, the client's connection closed or the channel stopped: over
	// a socket the stream was reset or closed, nothing more reaches the
	// client, and grpc-go's server, which writes the response after the
	// handler returns, fails to, with the context's code or, once the
	// transport is gone, Unavailable (see writeGone). Its stats handlers
	// hear that failure, or the handler's own error (server.go
	// processRPC).
	ended := u.uctx.Err()
	stopping := u.ch.state.Load() == stopped
	if st == nil && ended != nil {
		st = status.FromContextError(ended)
		if u.transportGone() {
			st = transportClosing
		}
	}
	r := unaryResult{resp: resp}
	if st == nil && u.stats != nil {
		var n int
		responses := u.info.responses(u.ch, u.method, nil)
		r.resp, n, err = responses.Send(resp)
		r.size, r.sent = int32(n), true
		st = handlerStatus(err)
	}
	heard := ended == nil
	switch {
	case st != nil:
		u.headerBeforeStatus(heard)
	case u.stats != nil:
		// The response went out behind the header, as grpc-go's server
		// writes them and then reports the response written.
		u.sendHeaderIfNot()
		u.stats.handle(u.ctx, payloadOut(false, resp, int(r.size)))
	}
	r.err = st.Err()
	end := r.err
	if r.err == nil && st != nil {
		// The handler's error has an OK status: it goes out as it is,
		// with no response, and the stats handlers hear the handler's
		// error (server.go processUnaryRPC).
		r.err, end = okStatus{st}, err
	}
	u.endServer(end, r.err, u.trailer, heard)
	u.uctx.end()
	r.wrote = heard && !stopping
	return r
}
