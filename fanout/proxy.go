package fanout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/fanin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A Backend is one server behind a Proxy.
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

// An OpenFunc starts the server-streaming call a Proxy fans out on cc,
// typically a generated client's method:
//
//	func(ctx context.Context, cc grpc.ClientConnInterface, r *pb.ListRequest) (grpc.ServerStreamingClient[pb.ListResponse], error) {
//		return pb.NewListStringsClient(cc).List(ctx, r)
//	}
type OpenFunc[Req, Resp any] func(ctx context.Context, cc grpc.ClientConnInterface, req *Req) (grpc.ServerStreamingClient[Resp], error)

// A Proxy fans one server-streaming call out to one replica of every
// shard of its backends and merges their responses. It is safe for
// concurrent use.
type Proxy[Req, Resp any] struct {
	open   OpenFunc[Req, Resp]
	shards []*shard
	cfg    config
	cmp    func(a, b *Resp) int
	equal  func(a, b *Resp) bool
	merge  func(kept, next *Resp) *Resp
}

// A shard is the replicas of one shard, called in turn.
type shard struct {
	name     string
	replicas []Backend
	next     atomic.Uint32
}

// pick is the replica the next call goes to.
func (s *shard) pick() Backend {
	return s.replicas[int(s.next.Add(1)-1)%len(s.replicas)]
}

// New returns a Proxy that opens calls with open on backends. It refuses
// no backend, a backend without a name, a connection or with another's
// name, and options whose functions are not of the response type.
func New[Req, Resp any](open OpenFunc[Req, Resp], backends []Backend, opts ...Option) (*Proxy[Req, Resp], error) {
	if open == nil {
		return nil, errors.New("fanout: New needs an OpenFunc")
	}
	if len(backends) == 0 {
		return nil, errors.New("fanout: New needs at least one backend")
	}
	p := &Proxy[Req, Resp]{open: open}
	for _, o := range opts {
		o(&p.cfg)
	}
	if err := p.takeFuncs(); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	byShard := map[string]*shard{}
	for i, b := range backends {
		switch {
		case b.Name == "":
			return nil, fmt.Errorf("fanout: backend %d has no Name", i)
		case names[b.Name]:
			return nil, fmt.Errorf("fanout: two backends are named %q", b.Name)
		case b.Conn == nil:
			return nil, fmt.Errorf("fanout: backend %q has no Conn", b.Name)
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
			p.shards = append(p.shards, s)
		}
		s.replicas = append(s.replicas, b)
	}
	return p, nil
}

// takeFuncs checks the options' functions against the response type.
func (p *Proxy[Req, Resp]) takeFuncs() error {
	var ok bool
	if p.cfg.cmp != nil {
		if p.cmp, ok = p.cfg.cmp.(func(a, b *Resp) int); !ok {
			return fmt.Errorf("fanout: WithSortedMerge's function is a %T, want a func(a, b *%T) int", p.cfg.cmp, *new(Resp))
		}
	}
	if p.cfg.equal != nil {
		if p.cmp == nil {
			return errors.New("fanout: WithDedup drops adjacent equal responses, so it needs WithSortedMerge")
		}
		if p.equal, ok = p.cfg.equal.(func(a, b *Resp) bool); !ok {
			return fmt.Errorf("fanout: WithDedup's equal is a %T, want a func(a, b *%T) bool", p.cfg.equal, *new(Resp))
		}
	}
	if p.cfg.merge != nil {
		p.merge = p.cfg.merge.(func(kept, next *Resp) *Resp) // of equal's type, checked above
	}
	return nil
}

// Stream calls one replica of every shard with req and yields their
// responses, merged. A backend's failure is a *BackendError, yielded
// (Warn) or ending the stream (Abort); if ctx ends, Stream yields its
// status (Canceled or DeadlineExceeded) and ends. Breaking out of the loop
// cancels every backend call, and every goroutine Stream started has ended
// when the loop is over.
func (p *Proxy[Req, Resp]) Stream(ctx context.Context, req *Req) iter.Seq2[*Resp, error] {
	return func(yield func(*Resp, error) bool) {
		calls, cancel := context.WithCancel(ctx)
		defer cancel()
		seqs := make([]iter.Seq2[*Resp, error], len(p.shards))
		for i, s := range p.shards {
			seqs[i] = p.call(calls, s.pick(), req)
		}
		var merged iter.Seq2[*Resp, error]
		if p.cmp != nil {
			merged = fanin.MergeSorted(p.cmp, seqs...)
			if p.equal != nil {
				merged = fanin.Dedup(merged, p.equal, p.merge)
			}
		} else {
			merged = fanin.MergeSeq(calls, seqs...)
		}
		for resp, err := range merged {
			if err == nil {
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
			if !yield(nil, be) || p.cfg.partial == Abort {
				cancel()
				return
			}
		}
	}
}

// Why a proxy gives up on a backend, as the cause of its call's context.
var (
	errFirstResponseTimeout = errors.New("no first response in time")
	errIdleTimeout          = errors.New("no response in time")
)

// call is the responses of one backend's call, then its error if it ends
// with one. It runs the call under its own context, which the timeouts
// cancel.
func (p *Proxy[Req, Resp]) call(parent context.Context, b Backend, req *Req) iter.Seq2[*Resp, error] {
	return func(yield func(*Resp, error) bool) {
		ctx, cancel := context.WithCancelCause(parent)
		defer cancel(nil)
		fail := func(err error) {
			if cause := context.Cause(ctx); cause == errFirstResponseTimeout || cause == errIdleTimeout {
				err = status.Errorf(codes.DeadlineExceeded, "fanout: %v", cause)
			}
			yield(nil, &BackendError{Backend: b.Name, Shard: b.Shard, Err: err})
		}
		// One timer watches the wait for the first response, open
		// included, then each wait for the next one, while the backend,
		// not the consumer, is the one to act.
		var timer, idle *time.Timer
		if p.cfg.firstTimeout > 0 {
			timer = time.AfterFunc(p.cfg.firstTimeout, func() { cancel(errFirstResponseTimeout) })
		}
		stop := func() {
			if timer != nil {
				timer.Stop()
			}
		}
		defer stop()
		stream, err := p.open(ctx, b.Conn, req)
		if err != nil {
			fail(err)
			return
		}
		for {
			resp, err := stream.Recv()
			stop()
			if err == io.EOF {
				return
			}
			if err != nil {
				fail(err)
				return
			}
			if !yield(resp, nil) {
				return
			}
			switch {
			case p.cfg.idleTimeout <= 0:
				timer = nil
			case idle == nil:
				idle = time.AfterFunc(p.cfg.idleTimeout, func() { cancel(errIdleTimeout) })
				timer = idle
			default:
				idle.Reset(p.cfg.idleTimeout)
				timer = idle
			}
		}
	}
}
