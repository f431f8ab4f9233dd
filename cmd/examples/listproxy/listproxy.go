package listproxy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A Server is the ListStrings proxy: its List fans out to its backends and
// streams the sorted, deduplicated union of their strings. Register it on
// a [localgrpc.Server] (or any [grpc.ServiceRegistrar]) with
// [listv1.RegisterListStringsServer]. It is safe for concurrent use.
type Server struct {
	listv1.UnimplementedListStringsServer
	proxy                *fanout.Proxy[listv1.ListRequest, string]
	maxStrings, maxBytes int
	conns                []localgrpc.ClientConn // Dial's, which Close closes
}

// An Option configures a Server.
type Option func(*config)

type config struct {
	maxStrings, maxBytes int
	fanout               []fanout.Option
	client               []localgrpc.ClientOption
	hasClient            bool
}

// The batch limits without WithBatchLimits.
const (
	DefaultMaxStrings = 64
	DefaultMaxBytes   = 1 << 20
)

// WithBatchLimits sets how many strings, and how many bytes of strings, a
// response of the proxy holds at most: DefaultMaxStrings and
// DefaultMaxBytes without it. A string longer than maxBytes goes alone.
// Both must be at least 1.
func WithBatchLimits(maxStrings, maxBytes int) Option {
	return func(c *config) { c.maxStrings, c.maxBytes = maxStrings, maxBytes }
}

// WithFanoutOptions passes options to the [fanout.Proxy] underneath:
// [fanout.WithPartialResponse], [fanout.WithFirstResponseTimeout],
// [fanout.WithIdleTimeout]. The proxy's sorted merge of strings comes
// after them and replaces a [fanout.WithSortedMerge] given here; the proxy
// drops repeated strings itself, so [fanout.WithDedup] adds nothing (and,
// for another type than string, New refuses it).
func WithFanoutOptions(opts ...fanout.Option) Option {
	return func(c *config) { c.fanout = append(c.fanout, opts...) }
}

// WithClientOptions passes options to [localgrpc.NewClient] for each
// address of [Dial]. [New], whose backends come connected, refuses it.
func WithClientOptions(opts ...localgrpc.ClientOption) Option {
	return func(c *config) { c.client, c.hasClient = append(c.client, opts...), true }
}

// New returns a proxy of backends, each a [fanout.Backend]: an
// inproc.Channel, a [localgrpc.NewClient] connection, a [*grpc.ClientConn],
// with replicas of one shard sharing its Shard. The connections stay the
// caller's. New refuses what [fanout.New] refuses (an empty list, a backend
// without a name or a connection, two of one name), batch limits below 1,
// and [WithClientOptions].
func New(backends []fanout.Backend, opts ...Option) (*Server, error) {
	cfg := newConfig(opts)
	if cfg.hasClient {
		return nil, errors.New("listproxy: WithClientOptions is for Dial: New's backends come connected")
	}
	return newServer(backends, cfg)
}

// Dial returns a proxy of the servers at addrs, each a shard of its own
// named by its address: any address of [localgrpc.NewClient] ("inproc:NAME"
// of a [localgrpc.Server] of this process, "unix:PATH", "unix:@NAME",
// "HOST:PORT", a grpc-go target such as "dns:///host:port", whose
// resolver may give several hosts that grpc-go balances as one backend).
// [Server.Close] closes the connections. Dial refuses an empty list, an
// address given twice, an address NewClient refuses, and batch limits
// below 1.
func Dial(addrs []string, opts ...Option) (*Server, error) {
	cfg := newConfig(opts)
	if len(addrs) == 0 {
		return nil, errors.New("listproxy: Dial needs at least one address")
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			return nil, fmt.Errorf("listproxy: Dial: address %q is given twice", a)
		}
		seen[a] = true
	}
	backends := make([]fanout.Backend, 0, len(addrs))
	var conns []localgrpc.ClientConn
	closeAll := func() {
		for _, cc := range conns {
			cc.Close()
		}
	}
	for _, a := range addrs {
		cc, err := localgrpc.NewClient(a, cfg.client...)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("listproxy: Dial: %w", err)
		}
		conns = append(conns, cc)
		backends = append(backends, fanout.Backend{Name: a, Conn: cc})
	}
	s, err := newServer(backends, cfg)
	if err != nil {
		closeAll()
		return nil, err
	}
	s.conns = conns
	return s, nil
}

func newConfig(opts []Option) config {
	cfg := config{maxStrings: DefaultMaxStrings, maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func newServer(backends []fanout.Backend, cfg config) (*Server, error) {
	if cfg.maxStrings < 1 || cfg.maxBytes < 1 {
		return nil, fmt.Errorf("listproxy: WithBatchLimits(%d, %d): both limits must be at least 1", cfg.maxStrings, cfg.maxBytes)
	}
	opts := append(cfg.fanout[:len(cfg.fanout):len(cfg.fanout)],
		fanout.WithSortedMerge(func(a, b *string) int { return strings.Compare(*a, *b) }))
	p, err := fanout.New(openStrings, backends, opts...)
	if err != nil {
		return nil, fmt.Errorf("listproxy: %w", err)
	}
	return &Server{proxy: p, maxStrings: cfg.maxStrings, maxBytes: cfg.maxBytes}, nil
}

// Close closes the connections [Dial] opened; a Server of [New] has none.
// Close it once the server that serves it has stopped: calls in flight
// would fail.
func (s *Server) Close() error {
	var errs []error
	for _, cc := range s.conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}

// List streams the sorted, deduplicated union of the backends' strings,
// then the status of the backends that failed, if any (see the package
// documentation).
func (s *Server) List(req *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	out := batcher{maxStrings: s.maxStrings, maxBytes: s.maxBytes, send: stream.Send}
	var failed []*fanout.BackendError
	var last *string // the last string sent: the merge puts equal ones together
	for str, err := range s.proxy.Stream(stream.Context(), req) {
		var be *fanout.BackendError
		switch {
		case err == nil:
			if last != nil && *str == *last {
				continue
			}
			last = str
			if err := out.add(*str); err != nil {
				return err // the client is gone: breaking out ends the backend calls
			}
		case errors.As(err, &be):
			failed = append(failed, be) // with Abort, the stream ends after it
		default:
			return err // the client's context ended: its Canceled or DeadlineExceeded
		}
	}
	if err := out.flush(); err != nil {
		return err
	}
	return failure(failed)
}

// failure is the status a call ends with when backends failed: the first
// one's code, and every one's name and status.
func failure(failed []*fanout.BackendError) error {
	if len(failed) == 0 {
		return nil
	}
	msgs := make([]string, len(failed))
	for i, be := range failed {
		st := status.Convert(be.Err)
		msgs[i] = fmt.Sprintf("backend %q: %v: %s", be.Backend, st.Code(), st.Message())
	}
	return status.Errorf(status.Code(failed[0].Err), "listproxy: %d backend(s) failed, so the list may lack strings of theirs: %s",
		len(failed), strings.Join(msgs, "; "))
}

// batcher packs strings into responses within the limits, sending each
// one as soon as it is full.
type batcher struct {
	maxStrings, maxBytes int
	send                 func(*listv1.ListResponse) error
	strs                 []string
	bytes                int
}

func (b *batcher) add(s string) error {
	if len(b.strs) > 0 && b.bytes+len(s) > b.maxBytes {
		if err := b.flush(); err != nil {
			return err
		}
	}
	b.strs = append(b.strs, s)
	b.bytes += len(s)
	if len(b.strs) == b.maxStrings {
		return b.flush()
	}
	return nil
}

func (b *batcher) flush() error {
	if len(b.strs) == 0 {
		return nil
	}
	resp := &listv1.ListResponse{Strings: b.strs}
	// A new array for the next response: an in-process receiver in Share
	// mode holds this one.
	b.strs, b.bytes = nil, 0
	return b.send(resp)
}

// openStrings is the proxy's call on a backend: the backend's List, read
// one string at a time.
func openStrings(ctx context.Context, cc grpc.ClientConnInterface, req *listv1.ListRequest) (grpc.ServerStreamingClient[string], error) {
	stream, err := listv1.NewListStringsClient(cc).List(ctx, req)
	if err != nil {
		return nil, err
	}
	return &stringStream{ClientStream: stream, responses: stream}, nil
}

// stringStream yields the strings of a backend's responses one by one,
// and fails at a string smaller than the one before it.
type stringStream struct {
	grpc.ClientStream
	responses grpc.ServerStreamingClient[listv1.ListResponse]
	batch     []string // what is left of the last response
	last      *string
}

func (s *stringStream) Recv() (*string, error) {
	for len(s.batch) == 0 {
		resp, err := s.responses.Recv()
		if err != nil {
			return nil, err
		}
		s.batch = resp.GetStrings()
	}
	str := &s.batch[0]
	s.batch = s.batch[1:]
	if s.last != nil && *str < *s.last {
		return nil, status.Errorf(codes.Internal, "listproxy: the backend sent %.40q after %.40q: its strings are not sorted", *str, *s.last)
	}
	s.last = str
	return str, nil
}
