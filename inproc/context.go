package inproc

import (
	"context"
	"sync"
	"sync/atomic"
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
	// parentValues says parent holds no caller values, so lookups of other
	// keys may go to it: that lets the context package find parent's
	// cancellation and link children to it without a goroutine.
	parentValues bool
	md           metadata.MD
	call         *call
}

// newServerContext is serverContext made of context.WithValue, for when the
// keys could not be probed.
func newServerContext(parent context.Context, parentValues bool, md metadata.MD, s *call) context.Context {
	base := parent
	if !parentValues {
		base = detached{parent}
	}
	ctx := metadata.NewIncomingContext(base, md)
	ctx = peer.NewContext(ctx, newPeer())
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
		if c.md == nil {
			return metadata.MD{}
		}
		return c.md
	case peerKey:
		return newPeer()
	case streamKey:
		return (*transportStream)(c.call)
	}
	if c.parentValues {
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

// inlineContext is the parent of an Inline unary handler's context. The
// handler runs on the client's goroutine, so the client's context gives its
// deadline and cancellation; Stop and the end of the call cancel it too, as
// they would over a network. The part that watches Stop is made on first
// use of Done or AfterFunc, so a handler that never watches its context
// pays nothing for it.
type inlineContext struct {
	client context.Context
	ch     *Channel
	once   sync.Once
	merged context.Context // ends with client, Stop, or the call
	cancel context.CancelFunc
	unlink func() bool
	ended  atomic.Bool
}

// endedContext stands in for merged once the call has ended.
var endedContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *inlineContext) Deadline() (time.Time, bool) { return c.client.Deadline() }
func (c *inlineContext) Value(any) any               { return nil }
func (c *inlineContext) Done() <-chan struct{}       { return c.watch().Done() }

func (c *inlineContext) AfterFunc(f func()) func() bool { return context.AfterFunc(c.watch(), f) }

func (c *inlineContext) Err() error {
	if err := c.client.Err(); err != nil {
		return err
	}
	if c.ended.Load() || c.ch.base.Err() != nil {
		return context.Canceled
	}
	return nil
}

func (c *inlineContext) watch() context.Context {
	c.once.Do(func() {
		c.merged, c.cancel = context.WithCancel(detached{c.client})
		c.unlink = context.AfterFunc(c.ch.base, c.cancel)
	})
	return c.merged
}

// end cancels the context when the call is over.
func (c *inlineContext) end() {
	c.ended.Store(true)
	c.once.Do(func() { c.merged = endedContext })
	if c.cancel != nil {
		c.unlink()
		c.cancel()
	}
}
