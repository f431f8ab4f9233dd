package inproc

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// call is what a call's handler side owns: the handler's context, the
// incoming metadata, and the header and trailer the handler sets.
type call struct {
	ch     *Channel
	method *method
	info   callInfo // the client's call options: copy mode, codec, limits
	md     metadata.MD
	ctx    context.Context // the handler's context
	sctx   serverContext   // ctx's core, kept here to save an allocation

	mu        sync.Mutex // guards header and trailer
	header    metadata.MD
	trailer   metadata.MD
	headerOut signal // raised, under mu, once the header is sent
	// trailersOnly says the status went out with no header before it,
	// none being sent or set: then, as over HTTP/2, the client receives
	// no header. Set under mu before headerOut is raised.
	trailersOnly bool
	// headerBad says the header went out with a field HTTP/2 refuses, so
	// that the client fails at it (see headerError). Set under mu before
	// headerOut is raised.
	headerBad bool
	// headerUnheard says the header went out only after the client left,
	// so that it never reaches the client. Set under mu before headerOut
	// is raised.
	headerUnheard bool
	// reset says the server's transport reset the stream before the
	// call began (see refusedRequest): no header or trailer comes.
	reset      bool
	mdComplete bool // md has the keys a transport adds, under mu: see incomingMD
	// parentValues is sctx's: it lives here, beside the other flags, so
	// that it takes no word of its own.
	parentValues bool

	stats *serverStats // nil unless the channel has server stats handlers
	// opened is what a forwarding channel's open returned for the call
	// (see inprocconn.OpenFunc).
	opened any
}

// serverStats is what a call's server stats handlers need: the handlers,
// and when the call began.
type serverStats struct {
	hs    statsHandlers
	begin time.Time
}

func (s *serverStats) handle(ctx context.Context, st stats.RPCStats) { s.hs.handle(ctx, st) }

// startServer makes the handler's context from parent, which gives its
// deadline and cancellation; parentValues says parent holds no caller
// values, so lookups may go to it.
func (c *call) startServer(parent context.Context, parentValues bool) {
	c.ctx = c.initContext(parent, parentValues)
	if hs := statsHandlers(c.ch.cfg.serverStats); hs != nil {
		c.stats = &serverStats{hs: hs, begin: time.Now()}
		c.ctx = c.inHeader(hs, c.ctx)
		isStream := c.method.stream != nil
		// FailFast false, as in the tag (see statsHandlers.tag).
		c.stats.handle(c.ctx, &stats.Begin{BeginTime: c.stats.begin,
			IsClientStream: isStream && c.method.stream.ClientStreams,
			IsServerStream: isStream && c.method.stream.ServerStreams})
	}
}

// inHeader tags ctx for the server's stats handlers hs and reports the
// request's header to them. grpc-go's transport reports the header as it
// reads it, before its server looks the method up or begins the call.
func (c *call) inHeader(hs statsHandlers, ctx context.Context) context.Context {
	ctx = hs.tag(ctx, c.method.name, false)
	remote, local := c.info.client.addrs()
	hs.handle(ctx, &stats.InHeader{Header: c.incomingMD().Copy(), FullMethod: c.method.name, RemoteAddr: remote, LocalAddr: local})
	return ctx
}

// refuse is the server's side of a call to fullMethod, which the channel
// does not have, with the request's metadata md. grpc-go's server answers
// such a call with its status alone and begins no call. Its stats
// handlers hear the header and the trailer, and neither Begin nor End. A
// malformed name is refused before the header is reported.
func (ch *Channel) refuse(ctx context.Context, ci callInfo, fullMethod string, md metadata.MD) {
	hs := statsHandlers(ch.cfg.serverStats)
	if hs == nil {
		return
	}
	parent, cancel := ch.serverParent(ctx)
	defer cancel()
	c := &call{ch: ch, method: &method{name: fullMethod}, info: ci, md: md}
	sctx := c.initContext(parent, true)
	if _, _, ok := splitMethod(fullMethod); ok {
		sctx = c.inHeader(hs, sctx)
	}
	hs.handle(sctx, &stats.OutTrailer{Trailer: c.trailer.Copy()})
}

// requestLost is the server's side of a unary call to m whose client
// refused to send its request (over the client's send limit, or failing
// to encode it), with the request's metadata md. grpc-go's client sends
// the header before it encodes the request (newClientStream, then
// SendMsg), and then resets the stream: its server begins the call, and
// the handler, waiting for its request, fails with its context before
// the code a generated handler runs before it decodes its request. Its
// stats handlers hear the header, the begin and the end, with Canceled,
// and the method's handler runs with a decoder that fails so, as
// grpc-go's runs: a generated one returns at once, a hand-written one
// (or a transport's forward handler) sees the call begin and fail.
func (ch *Channel) requestLost(ctx context.Context, ci callInfo, m *method, md metadata.MD) {
	if !ch.begin(ci.client) {
		return
	}
	defer ch.end()
	parent, cancel := ch.serverParent(ctx)
	c := &call{ch: ch, method: m, info: ci, md: md}
	c.startServer(parent, true)
	cancel() // the reset
	lost := status.FromContextError(context.Canceled).Err()
	m.unary(m.service.impl, c.ctx, func(any) error { return lost }, ch.unaryInt)
	c.endServer(lost, nil, nil, false)
}

// serverParent is the parent of the handler's context of a call whose
// client's context is ctx, for a call that ends before it would wait:
// the channel's context, with the client's deadline.
func (ch *Channel) serverParent(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ch.base, d)
	}
	return context.WithCancel(ch.base)
}

func (c *call) initContext(parent context.Context, parentValues bool) context.Context {
	if keysProbed {
		c.sctx = serverContext{parent: parent, call: c}
		c.parentValues = parentValues
		return &c.sctx
	}
	return newServerContext(parent, parentValues, c.incomingMD(), c)
}

// setHeader adds md to the header, unless the header went out or the
// call is over for the handler. As grpc-go's transport stream, which
// grpc.SetHeader reaches, it does not check md: what HTTP/2 refuses fails
// the call at the client (see wireError). ServerStream.SetHeader checks
// it first, as grpc-go's serverStream.
func (c *call) setHeader(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	if c.ctx.Err() != nil {
		return errHeaderWrite
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.headerOut.isRaised() {
		return errHeaderSent
	}
	c.header = metadata.Join(c.header, md)
	return nil
}

// sendHeader sends the header gathered so far with md, once; as
// setHeader, it does not check md.
func (c *call) sendHeader(md metadata.MD) error {
	if err := c.ctx.Err(); err != nil {
		// Nothing more reaches the client: grpc-go reports the end
		// with the context's code (see writeGone).
		return c.writeGone(status.FromContextError(err).Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.headerOut.isRaised() {
		return errHeaderSent
	}
	c.header = metadata.Join(c.header, md)
	c.publishHeader()
	return nil
}

// writeGone is what a handler's write (SendHeader, SendMsg) that finds
// the call over returns: err, unless the call's transport is gone (see
// transportGone). Then, as grpc-go's server, whose transport reports a
// closed connection before a stream's end, it returns Unavailable,
// whatever ended the call.
func (c *call) writeGone(err error) error {
	if c.transportGone() {
		return errTransportClosing
	}
	return err
}

// transportGone reports whether the call's transport is gone: the
// client's connection closed (localgrpc's NewClient, Close) or the
// channel stopped, as a grpc.Server's Stop closes its connections.
func (c *call) transportGone() bool {
	return c.ch.state.Load() == stopped || c.info.connClosed()
}

// sendHeaderIfNot sends the header before the first message or the end.
func (c *call) sendHeaderIfNot() {
	if c.headerOut.isRaised() {
		return
	}
	c.mu.Lock()
	if !c.headerOut.isRaised() {
		c.publishHeader()
	}
	c.mu.Unlock()
}

// headerBeforeStatus sends the header before the status, unless there is
// none to send: a handler that neither sent nor set one ends with trailers
// only, as over HTTP/2. heard says the client still hears of the call: a
// header that no longer reaches it, or none, is not reported to the stats
// handlers as sent.
func (c *call) headerBeforeStatus(heard bool) {
	if c.headerOut.isRaised() {
		return
	}
	c.mu.Lock()
	if !c.headerOut.isRaised() {
		c.trailersOnly = len(c.header) == 0
		if heard && !c.trailersOnly {
			c.publishHeader()
		} else {
			c.headerUnheard = !heard
			c.headerOut.raise()
		}
	}
	c.mu.Unlock()
}

// publishHeader sends the header; c.mu is held. As grpc-go's server, it
// reports the header alone: an OutHeader names the method, the authority
// and the addresses on the client's side only; and a header HTTP/2
// refuses goes out all the same, for the client to refuse.
func (c *call) publishHeader() {
	c.headerBad = wireError(c.header) != nil
	if c.stats != nil {
		c.stats.handle(c.ctx, &stats.OutHeader{Header: c.header.Copy()})
	}
	c.headerOut.raise()
}

// setTrailer adds md to the trailer, unless the call is over for the
// handler; grpc.SetTrailer reports that, ServerStream.SetTrailer cannot.
// As grpc-go's (whose serverStream.SetTrailer only logs what its check
// finds), it does not check md: what HTTP/2 refuses fails the call at the
// client (see wireError).
func (c *call) setTrailer(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	if c.ctx.Err() != nil {
		return errHeaderWrite
	}
	c.mu.Lock()
	c.trailer = metadata.Join(c.trailer, md)
	c.mu.Unlock()
	return nil
}

// endServer reports the end of the handler to the stats handlers: if
// heard, the trailer that reached the client with sent, the status that
// went out; then the End, with err, the handler's own error, as grpc-go's
// server reports it (server.go processRPC) whatever status went out
// before (a Send that failed sent its own). The End carries no trailer,
// as grpc-go's server's: its Trailer is the client side's field.
func (c *call) endServer(err, sent error, trailer metadata.MD, heard bool) {
	if c.stats == nil {
		return
	}
	if heard {
		c.stats.handle(c.ctx, &stats.OutTrailer{Trailer: outTrailer(trailer, sent)})
	}
	c.stats.handle(c.ctx, &stats.End{BeginTime: c.stats.begin, EndTime: time.Now(), Error: err})
}

// outTrailer is a copy of trailer as grpc-go's server reports it sent
// with the status sent: a status with details takes
// grpc-status-details-bin for their encoding, so the server deletes the
// handler's own before it reports the trailer, even where protobuf
// then fails to encode them (http2_server.go writeStatus).
func outTrailer(trailer metadata.MD, sent error) metadata.MD {
	md := trailer.Copy()
	if sent == nil || md[statusDetailsKey] == nil {
		return md
	}
	if st, ok := status.FromError(sent); ok && len(st.Proto().GetDetails()) > 0 {
		delete(md, statusDetailsKey)
	}
	return md
}

// handlerStatus is the status a handler's error gives the client, as
// grpc.Server makes it: status errors as they are, context errors as their
// codes, anything else Unknown.
func handlerStatus(err error) *status.Status {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		// A copy, so the client does not share the handler's details.
		return status.FromProto(st.Proto())
	}
	return status.FromContextError(err)
}

// transportStream is a call as grpc.ServerTransportStream, which
// grpc.Method, grpc.SetHeader, grpc.SendHeader and grpc.SetTrailer use.
type transportStream call

var _ grpc.ServerTransportStream = (*transportStream)(nil)

func (t *transportStream) Method() string                  { return t.method.name }
func (t *transportStream) SetHeader(md metadata.MD) error  { return (*call)(t).setHeader(md) }
func (t *transportStream) SendHeader(md metadata.MD) error { return (*call)(t).sendHeader(md) }
func (t *transportStream) SetTrailer(md metadata.MD) error { return (*call)(t).setTrailer(md) }
