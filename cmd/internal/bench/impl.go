package bench

import (
	"context"
	"runtime"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// An impl is one way for a client to reach a server in the same process.
// Every case runs the same workload code; only serve or connect differs.
type impl struct {
	name string
	// serve, for an impl that reaches the server through a connection,
	// serves srv and returns a connection to it; the workloads call the
	// generated clients over it (see clients), and FanOut puts a proxy in
	// front of such connections. Whatever it starts, it stops in
	// tb.Cleanup.
	serve func(tb testing.TB, srv servers) (grpc.ClientConnInterface, error)
	// connect, for the others, serves srv the impl's way and returns
	// clients of it. Whatever it starts, it stops in tb.Cleanup.
	connect func(tb testing.TB, srv servers) (clients, error)
	// skip maps each workload the impl takes no part in to the reason.
	skip map[string]string
	// goos, when set, is the only operating system the impl works on;
	// elsewhere Cases leaves it out, which is how it is skipped.
	goos string
}

// impls are the peers docs/cli.md's comparison names, in the order
// the suite runs them. The hand-written clients (chan, iter) exist only for
// streams: a unary call has no stream for a channel or a coroutine to
// carry, so either would be direct under another name.
var impls = []impl{
	{name: "localhost", serve: serveTCP},
	{name: "unix", serve: serveUnix},
	{name: "abstract", serve: serveAbstract, goos: "linux"},
	{name: "bufconn", serve: serveBufconn},
	{name: "grpchan", serve: serveGrpchan},
	{name: "grpchan-share", serve: serveGrpchanShare},
	{name: "chan", connect: chanClients, skip: map[string]string{Unary: noStream, FanOut: noConn, Batching: noBooks, Series: noStore}},
	{name: "iter", connect: iterClients, skip: map[string]string{Unary: noStream, FanOut: noConn, Batching: noBooks}},
	{name: "direct", connect: directClients, skip: map[string]string{FanOut: noConn, Batching: noBooks, Series: noStore}},
	{name: "floor", connect: floorClients, skip: map[string]string{PingPong: noFloor, FanOut: noConn, Batching: noBooks, Series: noStore}},
	{name: "inproc-clone-isolated", serve: serveInproc(inproc.Clone, inproc.Isolated)},
	{name: "inproc-share-isolated", serve: serveInproc(inproc.Share, inproc.Isolated)},
	{name: "inproc-clone-inline", serve: serveInproc(inproc.Clone, inproc.Inline)},
	{name: "inproc-share-inline", serve: serveInproc(inproc.Share, inproc.Inline)},
	{name: "connect-inproc", connect: connectInprocClients, skip: connectSkips},
	{name: "connect-unix", connect: connectUnixClients, skip: connectSkips},
	{name: "xproc-unix", serve: serveXprocUnix, skip: xprocSkips, goos: "linux"},
	{name: "xproc-abstract", serve: serveXprocAbstract, skip: xprocSkips, goos: "linux"},
	{name: "xproc-shm", serve: serveXprocShm, skip: xprocSkips, goos: "linux"},
	{name: "xproc-floor-socketpair", connect: floorSocketpairClients, skip: xprocFloorSkips, goos: "linux"},
	{name: "xproc-floor-ring", connect: floorRingClients, skip: xprocFloorSkips, goos: "linux"},
}

const (
	noStream = "a unary call has no stream to hand-write a client for: it would be direct"
	noConn   = "a fanout.Backend is a grpc.ClientConnInterface, which the hand-written clients are not"
	noBooks  = "the hand-written clients call ListStrings and Echo only"
	noStore  = "of the hand-written clients, only iter, Thanos's own, calls the Store API"
)

// availableImpls returns the impls that work on this operating system.
func availableImpls() []impl {
	var ok []impl
	for _, im := range impls {
		if im.goos == "" || im.goos == runtime.GOOS {
			ok = append(ok, im)
		}
	}
	return ok
}

// servers are the service implementations every case serves.
type servers struct {
	list listv1.ListStringsServer
	echo echov1.EchoServer
	more func(grpc.ServiceRegistrar) // a workload's own services, if any
}

// registerOn registers both services on r, and what more registers.
func (s servers) registerOn(r grpc.ServiceRegistrar) {
	listv1.RegisterListStringsServer(r, s.list)
	echov1.RegisterEchoServer(r, s.echo)
	if s.more != nil {
		s.more(r)
	}
}

// clients are what the workloads call, as one impl provides them.
type clients struct {
	list   listv1.ListStringsClient // ListStrings, unless pushList is set
	get    unaryClient              // Unary
	update bidiClient               // PingPong

	// pushList, when set, replaces list: it runs the List handler with a
	// stream whose Send calls send, so there is no client at all. It is
	// "direct" and "floor".
	pushList func(ctx context.Context, req *listv1.ListRequest, send func(*listv1.ListResponse) error) error
}

// unaryClient is the part of echov1.EchoClient that Unary calls.
type unaryClient interface {
	Get(ctx context.Context, in *echov1.EchoRequest, opts ...grpc.CallOption) (*echov1.EchoResponse, error)
}

// bidiClient is the part of echov1.EchoClient that PingPong calls, so
// hand-written clients need not implement the other methods.
type bidiClient interface {
	Update(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse], error)
}

// clients serves srv the impl's way and returns clients of it: the
// generated clients over a connection for an impl that serves one.
func (im impl) clients(tb testing.TB, srv servers) (clients, error) {
	if im.serve == nil {
		return im.connect(tb, srv)
	}
	cc, err := im.serve(tb, srv)
	if err != nil {
		return clients{}, err
	}
	echo := echov1.NewEchoClient(cc)
	return clients{list: listv1.NewListStringsClient(cc), get: echo, update: echo}, nil
}
