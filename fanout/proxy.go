package fanout

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/fanin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// A Backend is one server behind a Proxy.
// Of the replicas of a shard, a Proxy calls one, in turn.
// It passes over, for a while, a replica whose last call failed as an
// unhealthy server fails (see WithCooldown).
type Backend struct {
	// Name names the backend in errors; every backend of a Proxy has its
	// own.
	Name string
	// Shard groups the replicas of one shard, of which a Proxy calls one;
	// empty, the backend is a shard of its own.
	Shard string
	// Conn reaches the backend: an inproc.Channel, a localgrpc.NewClient
	// connection, a *grpc.ClientConn.
	Conn grpc.ClientConnInterface
}

// An OpenFunc starts the server-streaming call a Proxy fans out on cc.
// It is typically a generated client's method.
// The Proxy calls it, and the stream's Recv, on goroutines of its own.
// So a panic in them ends the program, as one in any goroutine does:
//
//	func(ctx context.Context, cc grpc.ClientConnInterface, r *pb.ListRequest) (grpc.ServerStreamingClient[pb.ListResponse], error) {
//		return pb.NewListStringsClient(cc).List(ctx, r)
//	}
type OpenFunc[Req, Resp any] func(ctx context.Context, cc grpc.ClientConnInterface, req *Req) (grpc.ServerStreamingClient[Resp], error)

// A Proxy fans one server-streaming call out to one replica of every
// shard of its backends and merges their responses. It is safe for
// concurrent use.
type Proxy[Req, Resp any] struct {
	core[Req, Resp]
}

// New returns a Proxy that opens calls with open on backends.
// It refuses:
//   - no backend;
//   - a backend without a name or a connection;
//   - a backend with another's name;
//   - options that are out of range;
//   - options whose functions are not of the response type.
func New[Req, Resp any](open OpenFunc[Req, Resp], backends []Backend, opts ...Option) (*Proxy[Req, Resp], error) {
	if open == nil {
		return nil, errors.New("fanout: New needs an OpenFunc")
	}
	p := &Proxy[Req, Resp]{}
	start := func(ctx context.Context, cc grpc.ClientConnInterface, req *Req) (func() (*Resp, error), error) {
		stream, err := open(ctx, cc, req)
		if err != nil {
			return nil, err
		}
		if stream == nil {
			return nil, status.Error(codes.Internal, "fanout: the OpenFunc returned neither a stream nor an error")
		}
		return stream.Recv, nil
	}
	if err := p.init(start, backends, opts); err != nil {
		return nil, err
	}
	return p, nil
}

// Stream calls one replica of every shard with req and yields their
// responses, merged.
// A backend's failure is a *BackendError.
// It is yielded under Warn, and ends the stream under Abort.
// If ctx ends, Stream yields its status (Canceled or DeadlineExceeded) and
// ends.
// Breaking out of the loop cancels every backend call.
// When the loop is over, every goroutine Stream started has ended.
func (p *Proxy[Req, Resp]) Stream(ctx context.Context, req *Req) iter.Seq2[*Resp, error] {
	return p.stream(ctx, req)
}

// Stats returns every backend's totals, in the order New got them.
func (p *Proxy[Req, Resp]) Stats() []BackendStats { return p.stats() }

// core is what a Proxy and a UnaryProxy share: the shards, the options,
// and the way a call fans out.
type core[Req, Resp any] struct {
	start    startFunc[Req, Resp]
	shards   []*shard
	replicas []*replica // in the order New got them
	cfg      config
	cmp      func(a, b *Resp) int
	equal    func(a, b *Resp) bool
	merge    func(kept, next *Resp) *Resp
	size     func(*Resp) int // nil: bytes are not counted
}

// A startFunc starts a backend call and returns what receives its
// responses, one at a time, then io.EOF.
type startFunc[Req, Resp any] func(ctx context.Context, cc grpc.ClientConnInterface, req *Req) (recv func() (*Resp, error), err error)

// A shard is the replicas of one shard, called in turn.
type shard struct {
	name     string
	replicas []*replica
	next     atomic.Uint32
	hedge    *hedger // nil: not hedged
}

// pick is the index of the replica the next call goes to first: the next
// in turn that is not cooling down after a failure, or the next in turn
// if all are.
func (s *shard) pick() int {
	next := int(s.next.Add(1)-1) % len(s.replicas)
	if s.replicas[next].failedUntil.Load() == 0 {
		return next
	}
	now := time.Now().UnixNano()
	for k := range len(s.replicas) {
		if i := (next + k) % len(s.replicas); !s.replicas[i].coolingAt(now) {
			return i
		}
	}
	return next
}

// hedgeTo is the index of the replica a hedge goes to: the next after
// first, in turn, not yet tried and not cooling down, or if every untried
// one is, the next untried.
func (s *shard) hedgeTo(first int, tried []bool) int {
	now := time.Now().UnixNano()
	fallback := -1
	for k := 1; k < len(s.replicas); k++ {
		i := (first + k) % len(s.replicas)
		if tried[i] {
			continue
		}
		if !s.replicas[i].coolingAt(now) {
			return i
		}
		if fallback < 0 {
			fallback = i
		}
	}
	return fallback
}

func (c *core[Req, Resp]) init(start startFunc[Req, Resp], backends []Backend, opts []Option) error {
	if len(backends) == 0 {
		return errors.New("fanout: New needs at least one backend")
	}
	c.start = start
	c.cfg.cooldown = DefaultCooldown
	for _, o := range opts {
		o(&c.cfg)
	}
	if err := c.cfg.check(); err != nil {
		return err
	}
	if err := c.takeFuncs(); err != nil {
		return err
	}
	if c.cfg.handler != nil {
		if _, ok := any(new(Resp)).(proto.Message); ok {
			c.size = func(r *Resp) int { return proto.Size(any(r).(proto.Message)) }
		}
	}
	names := map[string]bool{}
	byShard := map[string]*shard{}
	for i, b := range backends {
		switch {
		case b.Name == "":
			return fmt.Errorf("fanout: backend %d has no Name", i)
		case names[b.Name]:
			return fmt.Errorf("fanout: two backends are named %q", b.Name)
		case b.Conn == nil || isNilPointer(b.Conn):
			return fmt.Errorf("fanout: backend %q has no Conn", b.Name)
		}
		names[b.Name] = true
		key := b.Shard
		if key == "" {
			key = "\x00" + b.Name // a shard of its own, apart from named ones
		}
		s := byShard[key]
		if s == nil {
			s = &shard{name: b.Shard}
			byShard[key] = s
			c.shards = append(c.shards, s)
		}
		r := &replica{Backend: b}
		s.replicas = append(s.replicas, r)
		c.replicas = append(c.replicas, r)
	}
	if c.cfg.hedging != nil {
		for _, s := range c.shards {
			if len(s.replicas) > 1 {
				s.hedge = newHedger(*c.cfg.hedging)
			}
		}
	}
	return nil
}

// isNilPointer says whether v holds a nil pointer, such as a
// (*grpc.ClientConn)(nil), which would fail only at the first call.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// takeFuncs checks the options' functions against the response type.
func (c *core[Req, Resp]) takeFuncs() error {
	var ok bool
	if c.cfg.cmp != nil {
		if c.cmp, ok = c.cfg.cmp.(func(a, b *Resp) int); !ok {
			return fmt.Errorf("fanout: WithSortedMerge's function is a %T, want a func(a, b *%T) int", c.cfg.cmp, *new(Resp))
		}
		if c.cmp == nil {
			return errors.New("fanout: WithSortedMerge's function is nil")
		}
	}
	if c.cfg.equal != nil {
		if c.cmp == nil {
			return errors.New("fanout: WithDedup drops adjacent equal responses, so it needs WithSortedMerge")
		}
		if c.equal, ok = c.cfg.equal.(func(a, b *Resp) bool); !ok {
			return fmt.Errorf("fanout: WithDedup's equal is a %T, want a func(a, b *%T) bool", c.cfg.equal, *new(Resp))
		}
		if c.equal == nil {
			return errors.New("fanout: WithDedup's equal is nil")
		}
	}
	if c.cfg.merge != nil {
		c.merge = c.cfg.merge.(func(kept, next *Resp) *Resp) // of equal's type, checked above
	}
	return nil
}

// dedupMerge is WithDedup's merge, which sets *lost when it folds a run
// into nil; from then on it is not called again, as it would be with a
// nil kept for the rest of the run.
func (c *core[Req, Resp]) dedupMerge(lost *bool) func(kept, next *Resp) *Resp {
	if c.merge == nil {
		return nil
	}
	return func(kept, next *Resp) *Resp {
		if *lost {
			return nil
		}
		m := c.merge(kept, next)
		*lost = m == nil
		return m
	}
}

// mergeNilError is the error that ends a stream whose WithDedup merge
// returned nil: naming the method a proxy serves, if it serves one.
func mergeNilError[Resp any](ctx context.Context) error {
	if method, ok := grpc.Method(ctx); ok {
		return status.Errorf(codes.Internal, "fanout: the WithDedup merge function returned nil for method %s (a run of %T)", method, new(Resp))
	}
	return status.Errorf(codes.Internal, "fanout: the WithDedup merge function returned nil for a run of %T", new(Resp))
}

func (c *core[Req, Resp]) stats() []BackendStats {
	out := make([]BackendStats, len(c.replicas))
	for i, r := range c.replicas {
		out[i] = r.snapshot()
	}
	return out
}

func (c *core[Req, Resp]) stream(ctx context.Context, req *Req) iter.Seq2[*Resp, error] {
	return func(yield func(*Resp, error) bool) {
		calls, cancel := context.WithCancel(ctx)
		defer cancel()
		seqs := make([]iter.Seq2[*Resp, error], len(c.shards))
		var merged iter.Seq2[*Resp, error]
		lostRun := false // merge folded a run into nil
		if c.cmp != nil {
			// A sorted merge reads its sources one after the other to
			// start: their calls are opened together first.
			opened := c.openAll(calls, req)
			defer func() {
				for _, sc := range opened {
					sc.close(c)
				}
			}()
			for i, sc := range opened {
				seqs[i] = func(yield func(*Resp, error) bool) { sc.relay(c, yield) }
			}
			merged = fanin.MergeSorted(c.cmp, seqs...)
			if c.equal != nil {
				merged = fanin.Dedup(merged, c.equal, c.dedupMerge(&lostRun))
			}
		} else {
			for i, s := range c.shards {
				seqs[i] = c.call(calls, s, req)
			}
			merged = fanin.MergeSeq(calls, seqs...)
		}
		for resp, err := range merged {
			if err == nil {
				if lostRun {
					// The run's response is nil: yielded, it would reach
					// the caller as nothing, or as an empty message.
					cancel()
					yield(nil, mergeNilError[Resp](ctx))
					return
				}
				if !yield(resp, nil) {
					cancel() // before the loop ends: it waits for the calls
					return
				}
				continue
			}
			if ctxErr := ctx.Err(); ctxErr != nil {
				cancel()
				yield(nil, status.FromContextError(ctxErr).Err())
				return
			}
			var be *BackendError
			if !errors.As(err, &be) {
				be = &BackendError{Err: err} // not expected: every source error is one
			}
			if !yield(nil, be) || c.cfg.partial == Abort {
				cancel()
				return
			}
		}
	}
}
