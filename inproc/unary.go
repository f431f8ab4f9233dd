package inproc

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// Invoke performs a unary call, as grpc.ClientConn does.
func (ch *Channel) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	if ch.clientUnary != nil {
		return ch.clientUnary(ctx, method, req, reply, nil, ch.invoke, opts...)
	}
	return ch.invoke(ctx, method, req, reply, nil, opts...)
}

// unaryCall is one unary call: the handler's side and the request's
// hand-over to it.
type unaryCall struct {
	call
	uctx     unaryContext // the handler's context's parent
	isolated bool
	req      any
	// decoding guards req when the handler runs on its own goroutine: a
	// client that gives up must not return while the handler still copies
	// the request, since the caller may then change it.
	decoding atomic.Int32
}

const (
	reqPending int32 = iota
	reqCopying
	reqCopied
	reqAbandoned
)

type unaryResult struct {
	resp any
	err  error
}

var resultChans = sync.Pool{New: func() any { return make(chan unaryResult, 1) }}

func (ch *Channel) invoke(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) (err error) {
	ci, err := ch.callInfo(opts)
	if err != nil {
		return err
	}
	m, lookupErr := ch.lookup(method)
	if m != nil && m.unary == nil {
		return ch.invokeStream(ctx, method, req, reply, opts)
	}
	cs := clientStats{hs: ch.cfg.clientStats}
	if cs.hs != nil {
		ctx = cs.begin(ctx, method, false, false)
	}
	var header, trailer metadata.MD
	defer func() {
		if cs.hs != nil {
			cs.end(ctx, trailer, err)
		}
		if ci.wantsFinish() {
			ci.finish(header, trailer, err)
		}
	}()
	if lookupErr != nil {
		return lookupErr
	}
	md, err := ci.outgoing(ctx, method)
	if err != nil {
		return err
	}
	if cs.hs != nil {
		cs.outHeader(ctx, method, md)
		if err := cs.outPayload(ctx, req, &ci); err != nil {
			return err
		}
	} else if ci.maxSend > 0 {
		if _, err := checkSize(req, &ci, true); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	if !ch.begin() {
		return errStopped
	}
	u := &unaryCall{call: call{ch: ch, method: m, info: ci, md: md}, req: req, isolated: ch.cfg.execution == Isolated}
	u.uctx.init(ch, ctx, !u.isolated)
	u.startServer(&u.uctx, false)
	var resp any
	if !u.isolated {
		resp, err = u.runInline(ctx)
	} else {
		resp, err = u.runIsolated(ctx)
		if err == errClientGone {
			return status.FromContextError(ctx.Err()).Err()
		}
		if err == errStopped {
			return err
		}
	}
	header, trailer = u.header, u.trailer
	if cs.hs != nil {
		cs.inHeader(ctx, header)
	}
	if err != nil {
		return err
	}
	if ci.maxRecv > 0 {
		if _, err := checkSize(resp, &ci, false); err != nil {
			return err
		}
	}
	if err := copyMessage(reply, resp, ci.copy, ci.codec); err != nil {
		return err
	}
	if cs.hs != nil {
		cs.inPayload(ctx, reply, &ci)
	}
	return nil
}

var errClientGone = status.Error(codes.Canceled, "inproc: the client is gone")

func (u *unaryCall) runInline(ctx context.Context) (any, error) {
	resp, err := u.handle()
	err = u.finish(resp, err)
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The client stopped waiting before the response: over a network
		// the response would be lost.
		return nil, status.FromContextError(ctxErr).Err()
	}
	return resp, err
}

// runIsolated runs the handler on its own goroutine and waits for it, for
// the client's context to end, or for Stop.
func (u *unaryCall) runIsolated(ctx context.Context) (any, error) {
	results := resultChans.Get().(chan unaryResult)
	go func() {
		resp, err := u.handle()
		results <- unaryResult{resp, u.finish(resp, err)}
	}()
	select {
	case r := <-results:
		resultChans.Put(results)
		return r.resp, r.err
	case <-ctx.Done():
		cancelForClient(ctx, u.uctx.end)
		u.abandonRequest()
		return nil, errClientGone
	case <-u.ch.quit:
		u.abandonRequest()
		return nil, errStopped
	}
}

// cancelForClient ends a handler's context because the client's ended.
// A deadline is left to the handler's own timer, so the handler sees
// DeadlineExceeded, as over a network.
func cancelForClient(client context.Context, cancel func()) {
	if client.Err() != context.DeadlineExceeded {
		cancel()
	}
}

// abandonRequest makes sure the handler no longer reads the request.
func (u *unaryCall) abandonRequest() {
	for !u.decoding.CompareAndSwap(reqPending, reqAbandoned) {
		if u.decoding.Load() != reqCopying {
			return
		}
		runtime.Gosched() // a copy in progress takes microseconds
	}
}

func (u *unaryCall) handle() (any, error) {
	h := u.method.unary
	impl := u.method.service.impl
	if u.ch.unaryInt != nil {
		return h(impl, u.ctx, u.decode, u.ch.unaryInt)
	}
	return h(impl, u.ctx, u.decode, nil)
}

// invokeStream makes a unary call to a streaming method, as grpc-go does:
// one message each way.
func (ch *Channel) invokeStream(ctx context.Context, method string, req, reply any, opts []grpc.CallOption) error {
	s, err := ch.newStream(ctx, &grpc.StreamDesc{}, nil, method, opts...)
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

// decode gives the handler its request.
func (u *unaryCall) decode(in any) error {
	isolated := u.isolated
	if isolated && !u.decoding.CompareAndSwap(reqPending, reqCopying) {
		return status.Error(codes.Canceled, "context canceled")
	}
	err := copyMessage(in, u.req, u.info.copy, u.info.codec)
	if isolated {
		u.decoding.Store(reqCopied)
	}
	if err == nil && u.stats != nil {
		n, _ := messageSize(in, u.info.codec)
		u.stats.handle(u.ctx, &stats.InPayload{Payload: in, Length: n, WireLength: n + 5, RecvTime: time.Now()})
	}
	return err
}

// finish ends the handler's side: the header goes out if it has not, the
// stats handlers hear of the end, and the call is counted out.
func (u *unaryCall) finish(resp any, err error) error {
	st := handlerStatus(err)
	u.sendHeaderIfNot()
	if st == nil && u.stats != nil {
		n, _ := messageSize(resp, u.info.codec)
		u.stats.handle(u.ctx, &stats.OutPayload{Payload: resp, Length: n, WireLength: n + 5, SentTime: time.Now()})
	}
	u.endServer(st)
	u.uctx.end()
	u.ch.end()
	return st.Err()
}
