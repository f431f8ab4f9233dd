package inproc

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// The context keys of grpc-go, metadata and peer are unexported. Watching
// their own accessors look them up on a probe lets serverContext answer
// those lookups from its fields: one allocation per call instead of a chain
// of context.WithValue, and values such as the peer built only when asked.
var (
	incomingMDKey = probeKey(func(ctx context.Context) { metadata.FromIncomingContext(ctx) })
	peerKey       = probeKey(func(ctx context.Context) { peer.FromContext(ctx) })
	streamKey     = probeKey(func(ctx context.Context) { grpc.ServerTransportStreamFromContext(ctx) })
	// keysProbed is false if a probe saw no lookup, or a lookup that the
	// package's own setter does not answer; newServerContext then falls back
	// to context.WithValue.
	keysProbed = checkProbedKeys()
)

type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

func probeKey(lookup func(context.Context)) any {
	p := &keyProbe{Context: context.Background()}
	lookup(p)
	return p.key
}

func checkProbedKeys() bool {
	bg := context.Background()
	md := metadata.MD{"k": {"v"}}
	p := &peer.Peer{}
	var ts grpc.ServerTransportStream = (*transportStream)(&call{})
	return incomingMDKey != nil && peerKey != nil && streamKey != nil &&
		metadata.NewIncomingContext(bg, md).Value(incomingMDKey) != nil &&
		peer.NewContext(bg, p).Value(peerKey) == p &&
		grpc.NewContextWithServerTransportStream(bg, ts).Value(streamKey) == ts
}

// serverContext is a handler's context. It takes its deadline and
// cancellation from parent, and answers the lookups of incoming metadata,
// peer and grpc.ServerTransportStream (so grpc.Method, grpc.SetHeader and
// friends work) from the call.
type serverContext struct {
	parent context.Context
	// call's md is the incoming metadata; its parentValues says parent
	// holds no caller values, so lookups of other keys may go to it: that
	// lets the context package find parent's cancellation and link
	// children to it without a goroutine.
	call *call
}

// newServerContext is serverContext made of context.WithValue, for when the
// keys could not be probed.
func newServerContext(parent context.Context, parentValues bool, md metadata.MD, s *call) context.Context {
	base := parent
	if !parentValues {
		base = detached{parent}
	}
	ctx := metadata.NewIncomingContext(base, md)
	ctx = peer.NewContext(ctx, s.info.client.peerOf())
	return grpc.NewContextWithServerTransportStream(ctx, (*transportStream)(s))
}

func (c *serverContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *serverContext) Done() <-chan struct{}       { return c.parent.Done() }
func (c *serverContext) Err() error                  { return c.parent.Err() }

// AfterFunc lets context.WithCancel and friends link a child to the
// parent's cancellation without a goroutine when parent's values are hidden.
func (c *serverContext) AfterFunc(f func()) func() bool { return context.AfterFunc(c.parent, f) }

func (c *serverContext) Value(key any) any {
	switch key {
	case incomingMDKey:
		return c.call.incomingMD()
	case peerKey:
		return c.call.info.client.peerOf()
	case streamKey:
		return (*transportStream)(c.call)
	}
	if c.call.parentValues {
		return c.parent.Value(key)
	}
	return nil
}

func (c *serverContext) String() string { return "inproc.serverContext" }

// detached carries a context's deadline and cancellation but none of its
// values: a network does not carry them either.
type detached struct{ context.Context }

func (detached) Value(any) any { return nil }

func (d detached) AfterFunc(f func()) func() bool { return context.AfterFunc(d.Context, f) }
