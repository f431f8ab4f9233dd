package fanout

import (
	"context"
	"errors"
	"io"
	"iter"

	"google.golang.org/grpc"
)

// A UnaryFunc makes the unary call a UnaryProxy fans out on cc, typically
// a generated client's method:
//
//	func(ctx context.Context, cc grpc.ClientConnInterface, r *pb.GetRequest) (*pb.GetResponse, error) {
//		return pb.NewStoreClient(cc).Get(ctx, r)
//	}
type UnaryFunc[Req, Resp any] func(ctx context.Context, cc grpc.ClientConnInterface, req *Req) (*Resp, error)

// A UnaryProxy fans one unary call out to one replica of every shard of its
// backends and gathers one response per shard.
// Its options are a Proxy's, hedging included.
// For hedging, the response is the first response.
// WithIdleTimeout has no meaning for it, and NewUnary refuses it.
// It is safe for concurrent use.
type UnaryProxy[Req, Resp any] struct {
	core[Req, Resp]
}

// NewUnary returns a UnaryProxy that calls backends with call. It refuses
// what New refuses, and WithIdleTimeout.
func NewUnary[Req, Resp any](call UnaryFunc[Req, Resp], backends []Backend, opts ...Option) (*UnaryProxy[Req, Resp], error) {
	if call == nil {
		return nil, errors.New("fanout: NewUnary needs a UnaryFunc")
	}
	p := &UnaryProxy[Req, Resp]{}
	start := func(ctx context.Context, cc grpc.ClientConnInterface, req *Req) (func() (*Resp, error), error) {
		resp, err := call(ctx, cc, req)
		if err != nil {
			return nil, err
		}
		return func() (*Resp, error) {
			if resp == nil {
				return nil, io.EOF
			}
			r := resp
			resp = nil
			return r, nil
		}, nil
	}
	if err := p.init(start, backends, opts); err != nil {
		return nil, err
	}
	if p.cfg.idleTimeout != 0 {
		return nil, errors.New("fanout: WithIdleTimeout waits between responses, and a unary call has one: use WithFirstResponseTimeout")
	}
	return p, nil
}

// Stream calls one replica of every shard with req and yields their
// responses as they come.
// With WithSortedMerge, they come in order.
// It yields the failures as a Proxy's Stream does.
func (p *UnaryProxy[Req, Resp]) Stream(ctx context.Context, req *Req) iter.Seq2[*Resp, error] {
	return p.stream(ctx, req)
}

// Gather calls one replica of every shard with req and returns their
// responses, in the order they came.
// With WithSortedMerge and WithDedup, they are sorted and deduplicated.
//
// If backends failed, the error joins their *BackendErrors, and errors.As
// finds each.
// Under Warn, the responses are then those of the other backends.
// The responses are nil in these cases:
//   - under Abort, when a backend failed;
//   - if ctx ends;
//   - if the stream ended on an error that is no backend's, such as a
//     WithDedup merge that returned nil.
func (p *UnaryProxy[Req, Resp]) Gather(ctx context.Context, req *Req) ([]*Resp, error) {
	var resps []*Resp
	var errs []error
	short := false // the stream ended before every backend's responses
	for resp, err := range p.stream(ctx, req) {
		if err != nil {
			errs = append(errs, err)
			var be *BackendError
			short = short || !errors.As(err, &be)
			continue
		}
		resps = append(resps, resp)
	}
	if len(errs) > 0 && (p.cfg.partial == Abort || ctx.Err() != nil || short) {
		return nil, errors.Join(errs...)
	}
	return resps, errors.Join(errs...)
}

// Stats returns every backend's totals, in the order NewUnary got them.
func (p *UnaryProxy[Req, Resp]) Stats() []BackendStats { return p.stats() }
