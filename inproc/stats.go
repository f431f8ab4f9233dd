package inproc

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// Addr is the address of both ends of an in-process call.
// It is what peer.Peer and stats handlers see.
type Addr struct{}

// Network returns "inproc".
func (Addr) Network() string { return "inproc" }

// String returns "inproc".
func (Addr) String() string { return "inproc" }

var _ net.Addr = Addr{}

func newPeer() *peer.Peer { return &peer.Peer{Addr: Addr{}, LocalAddr: Addr{}} }

// statsHandlers are the stats handlers of one side of a channel.
type statsHandlers []stats.Handler

// tag tags ctx for a call of method. A server tags with failFast false,
// as grpc-go's: whether a call waits for ready is the client's choice,
// and no header carries it.
func (hs statsHandlers) tag(ctx context.Context, method string, failFast bool) context.Context {
	for _, h := range hs {
		ctx = h.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method, FailFast: failFast})
	}
	return ctx
}

func (hs statsHandlers) handle(ctx context.Context, s stats.RPCStats) {
	for _, h := range hs {
		h.HandleRPC(ctx, s)
	}
}

// clientStats reports one call to the client's stats handlers.
type clientStats struct {
	hs        statsHandlers
	beginTime time.Time
}

func (cs *clientStats) begin(ctx context.Context, method string, failFast, clientStream, serverStream bool) context.Context {
	cs.beginTime = time.Now()
	ctx = cs.hs.tag(ctx, method, failFast)
	cs.hs.handle(ctx, &stats.Begin{Client: true, BeginTime: cs.beginTime, FailFast: failFast, IsClientStream: clientStream, IsServerStream: serverStream})
	return ctx
}

// outHeader reports the request's header as grpc-go's client reports it:
// the context's outgoing metadata with its user-agent, without what
// per-RPC credentials add, and the :authority it goes with.
func (cs *clientStats) outHeader(ctx context.Context, cl *client, method, authority string) {
	md, _ := metadata.FromOutgoingContext(ctx) // a copy
	if md == nil {
		md = metadata.MD{}
	}
	md["user-agent"] = userAgent
	remote, local := cl.addrs()
	cs.hs.handle(ctx, &stats.OutHeader{Client: true, Header: md, FullMethod: method, Authority: authority, RemoteAddr: remote, LocalAddr: local})
}

// inHeader reports the response's header md. As grpc-go's client, it
// names no addresses: an InHeader has them on the server's side only.
func (cs *clientStats) inHeader(ctx context.Context, md metadata.MD) {
	cs.hs.handle(ctx, &stats.InHeader{Client: true, Header: md.Copy()})
}

// outPayload reports m, of n bytes encoded.
func (cs *clientStats) outPayload(ctx context.Context, m any, n int) {
	cs.hs.handle(ctx, payloadOut(true, m, n))
}

func (cs *clientStats) inPayload(ctx context.Context, m any, n int) {
	cs.hs.handle(ctx, payloadIn(true, m, n))
}

// inTrailer reports the trailer, if one came.
func (cs *clientStats) inTrailer(ctx context.Context, trailer metadata.MD) {
	if trailer != nil {
		cs.hs.handle(ctx, &stats.InTrailer{Client: true, Trailer: trailer.Copy()})
	}
}

// end reports the end of the call with err, and the trailer that came
// (nil: none).
func (cs *clientStats) end(ctx context.Context, trailer metadata.MD, err error) {
	cs.hs.handle(ctx, &stats.End{Client: true, BeginTime: cs.beginTime, EndTime: time.Now(), Trailer: trailer.Copy(), Error: err})
}

// payloadOut is what stats handlers hear of a message of n bytes, encoded,
// sent by the client or the server. Nothing is compressed, so its
// compressed length is n, and a socket would add gRPC's 5-byte header.
func payloadOut(client bool, m any, n int) *stats.OutPayload {
	return &stats.OutPayload{Client: client, Payload: m, Length: n, CompressedLength: n, WireLength: n + 5, SentTime: time.Now()}
}

// payloadIn is payloadOut for a message received.
func payloadIn(client bool, m any, n int) *stats.InPayload {
	return &stats.InPayload{Client: client, Payload: m, Length: n, CompressedLength: n, WireLength: n + 5, RecvTime: time.Now()}
}
