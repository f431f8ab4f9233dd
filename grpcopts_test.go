package localgrpc_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	_ "unsafe"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// countingStats counts the RPCs a stats handler hears of.
type countingStats struct{ begins atomic.Int64 }

func (c *countingStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (c *countingStats) HandleRPC(_ context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.Begin); ok {
		c.begins.Add(1)
	}
}
func (c *countingStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (c *countingStats) HandleConn(context.Context, stats.ConnStats) {}

// TestGRPCServerOptionsNeverSkippedInproc checks, per grpc-go server
// option that changes what a call may do, that given through
// WithGRPCServerOptions it applies over a socket and that Listen refuses
// an in-process address beside it, naming the option and what to use:
// in-process calls would skip it in silence. Listen refuses one that
// concerns sockets alone too: the Server's socket options give those.
func TestGRPCServerOptionsNeverSkippedInproc(t *testing.T) {
	var denied atomic.Int64
	deny := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		denied.Add(1)
		return nil, status.Error(codes.PermissionDenied, "no")
	}
	denyStream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		denied.Add(1)
		return status.Error(codes.PermissionDenied, "no")
	}
	big := strings.Repeat("x", 100)
	controls := []struct {
		name string
		opt  grpc.ServerOption
		// over checks, over the socket, that the option applies.
		over func(t *testing.T, c echov1.EchoClient)
		// named is what the refusal must mention.
		named string
	}{
		{"UnaryInterceptor", grpc.UnaryInterceptor(deny), wantDenied(&denied), "WithServerUnaryInterceptor"},
		{"ChainUnaryInterceptor", grpc.ChainUnaryInterceptor(deny), wantDenied(&denied), "WithServerUnaryInterceptor"},
		{"StreamInterceptor", grpc.StreamInterceptor(denyStream), wantStreamDenied(&denied), "WithServerStreamInterceptor"},
		{"ChainStreamInterceptor", grpc.ChainStreamInterceptor(denyStream), wantStreamDenied(&denied), "WithServerStreamInterceptor"},
		{"MaxRecvMsgSize", grpc.MaxRecvMsgSize(64), func(t *testing.T, c echov1.EchoClient) {
			_, err := c.Get(t.Context(), &echov1.EchoRequest{Text: big})
			if status.Code(err) != codes.ResourceExhausted {
				t.Errorf("a 100-byte request under MaxRecvMsgSize(64): %v, want ResourceExhausted", err)
			}
		}, "WithServerMaxRecvMsgSize"},
		{"MaxSendMsgSize", grpc.MaxSendMsgSize(64), func(t *testing.T, c echov1.EchoClient) {
			_, err := c.Get(t.Context(), &echov1.EchoRequest{Text: big})
			if status.Code(err) != codes.ResourceExhausted {
				t.Errorf("a 100-byte response under MaxSendMsgSize(64): %v, want ResourceExhausted", err)
			}
		}, "WithServerMaxSendMsgSize"},
		{"InTapHandle", grpc.InTapHandle(func(ctx context.Context, _ *tap.Info) (context.Context, error) {
			return nil, status.Error(codes.PermissionDenied, "tapped")
		}), func(t *testing.T, c echov1.EchoClient) {
			_, err := c.Get(t.Context(), &echov1.EchoRequest{Text: "x"})
			if status.Code(err) != codes.PermissionDenied {
				t.Errorf("a call through a tap that refuses: %v, want PermissionDenied", err)
			}
		}, "grpc.InTapHandle"},
		{"StatsHandler", grpc.StatsHandler(&countingStats{}), nil, "WithServerStatsHandler"},
		{"UnknownServiceHandler", grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error { return nil }), nil, "grpc.UnknownServiceHandler"},
		{"ForceServerCodec", grpc.ForceServerCodecV2(encoding.GetCodecV2("proto")), nil, "grpc.ForceServerCodec"},
		{"MaxHeaderListSize", grpc.MaxHeaderListSize(4096), nil, "grpc.MaxHeaderListSize"},
		// At grpc-go's default value, a size limit still replaces the
		// Server's own on sockets (see the Server's WithServerMaxRecvMsgSize).
		{"MaxRecvMsgSize-default", grpc.MaxRecvMsgSize(4 << 20), nil, "WithServerMaxRecvMsgSize"},
	}
	for _, c := range controls {
		t.Run("control="+c.name, func(t *testing.T) {
			srv := servertest.NewEchoServer(localgrpc.WithGRPCServerOptions(c.opt))
			sock := "unix:@" + servertest.UniqueName()
			servertest.Serve(t, srv, sock)
			if c.over != nil {
				c.over(t, servertest.Dial(t, sock))
			}
			err := srv.Listen("inproc:" + servertest.UniqueName())
			if err == nil {
				t.Fatalf("Listen on an in-process address beside %s succeeded: in-process calls would skip it", c.name)
			}
			if !strings.Contains(err.Error(), c.named) {
				t.Errorf("Listen's refusal %q does not name %s", err, c.named)
			}
		})
	}

	// Any option of grpc-go's is refused beside an in-process or shm:
	// address, even one that concerns sockets alone: which it is cannot be
	// told. Over a socket alone it is served.
	keep := localgrpc.WithGRPCServerOptions(grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Hour}))
	for _, scheme := range []string{"inproc:", "shm:@"} {
		t.Run("socket-only/refused="+scheme, func(t *testing.T) {
			srv := servertest.NewEchoServer(keep)
			defer srv.Stop()
			err := srv.Listen(scheme + servertest.UniqueName())
			if err == nil {
				t.Fatalf("Listen(%s) beside grpc.KeepaliveParams given through WithGRPCServerOptions succeeded", scheme)
			}
			if !strings.Contains(err.Error(), "WithServerKeepaliveParams") {
				t.Errorf("Listen's refusal %q does not name WithServerKeepaliveParams", err)
			}
		})
	}
	t.Run("socket-only/socket", func(t *testing.T) {
		srv := servertest.NewEchoServer(keep)
		sock := "unix:@" + servertest.UniqueName()
		servertest.Serve(t, srv, sock)
		if _, err := servertest.Dial(t, sock).Get(t.Context(), &echov1.EchoRequest{Text: "x"}); err != nil {
			t.Errorf("a socket call beside grpc.KeepaliveParams: %v", err)
		}
	})
}

// wantDenied checks that a unary call is refused by the deny interceptor.
func wantDenied(denied *atomic.Int64) func(t *testing.T, c echov1.EchoClient) {
	return func(t *testing.T, c echov1.EchoClient) {
		before := denied.Load()
		_, err := c.Get(t.Context(), &echov1.EchoRequest{Text: "x"})
		if status.Code(err) != codes.PermissionDenied || denied.Load() == before {
			t.Errorf("a call under a denying interceptor: %v, want PermissionDenied from it", err)
		}
	}
}

// wantStreamDenied checks that a stream is refused by the deny interceptor.
func wantStreamDenied(denied *atomic.Int64) func(t *testing.T, c echov1.EchoClient) {
	return func(t *testing.T, c echov1.EchoClient) {
		before := denied.Load()
		s, err := c.Expand(t.Context(), &echov1.EchoRequest{Text: "x"})
		if err == nil {
			_, err = s.Recv()
		}
		if status.Code(err) != codes.PermissionDenied || denied.Load() == before {
			t.Errorf("a stream under a denying interceptor: %v, want PermissionDenied from it", err)
		}
	}
}

// TestServerOwnControlsApplyEverywhere checks the way out the refusal
// names: the Server's own interceptor and size limit apply over a socket
// and in-process alike.
func TestServerOwnControlsApplyEverywhere(t *testing.T) {
	var denied atomic.Int64
	srv := servertest.NewEchoServer(
		localgrpc.WithServerUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if req.(*echov1.EchoRequest).GetText() == "deny" {
				denied.Add(1)
				return nil, status.Error(codes.PermissionDenied, "no")
			}
			return h(ctx, req)
		}),
		localgrpc.WithServerMaxRecvMsgSize(64))
	sock, name := "unix:@"+servertest.UniqueName(), "inproc:"+servertest.UniqueName()
	servertest.Serve(t, srv, sock, name)
	for _, addr := range []string{sock, name} {
		c := servertest.Dial(t, addr)
		before := denied.Load()
		if _, err := c.Get(t.Context(), &echov1.EchoRequest{Text: "deny"}); status.Code(err) != codes.PermissionDenied || denied.Load() == before {
			t.Errorf("%s: a call the interceptor denies: %v, want PermissionDenied", addr, err)
		}
		if _, err := c.Get(t.Context(), &echov1.EchoRequest{Text: strings.Repeat("x", 100)}); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("%s: a 100-byte request under WithServerMaxRecvMsgSize(64): %v, want ResourceExhausted", addr, err)
		}
	}
}

// TestSizeOptionAtDefaultStillRefusesInproc: the check
// compares the options given through WithGRPCServerOptions with a bare
// grpc.Server's defaults, not with what the Server itself configures.
// grpc.MaxRecvMsgSize(4 MiB), grpc-go's default, equals that default, so
// it passes the check, yet it comes after WithServerMaxRecvMsgSize(1000)
// in the grpc.Server's options and replaces it: sockets take 2 KB
// requests, in-process calls refuse them, and Listen refuses nothing.
func TestSizeOptionAtDefaultStillRefusesInproc(t *testing.T) {
	srv := newEchoServer(
		localgrpc.WithServerMaxRecvMsgSize(1000),
		localgrpc.WithGRPCServerOptions(grpc.MaxRecvMsgSize(4<<20)),
	)
	name := uniqueName(t)
	if err := srv.Listen("inproc:"+name, "unix:@"+name); err != nil {
		return // refused: held
	}
	serve(t, srv)
	text := strings.Repeat("x", 2000)
	codesBy := map[string]codes.Code{}
	for _, addr := range srv.Addrs() {
		_, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{Text: text})
		codesBy[addr] = status.Code(err)
	}
	if codesBy["inproc:"+name] != codesBy["unix:@"+name] {
		t.Errorf("WithServerMaxRecvMsgSize(1000) + WithGRPCServerOptions(grpc.MaxRecvMsgSize(4<<20)): Listen took an in-process address, yet a 2000-byte request gets %v in-process and %v over the socket: the grpc-go option changed what a socket call may do and in-process calls skip it", codesBy["inproc:"+name], codesBy["unix:@"+name])
	}
}

// TestMaxHeaderListSizeRefusesInproc: maxHeaderListSize is in the
// socket-only allowlist, yet grpc.MaxHeaderListSize bounds the metadata a
// call may carry, a size limit like MaxRecvMsgSize: over the socket a call
// with 64 KiB of metadata fails, in-process it reaches the handler, and
// Listen refused nothing.
func TestMaxHeaderListSizeRefusesInproc(t *testing.T) {
	srv := newEchoServer(localgrpc.WithGRPCServerOptions(grpc.MaxHeaderListSize(4096)))
	name := uniqueName(t)
	if err := srv.Listen("inproc:"+name, "unix:@"+name); err != nil {
		return // refused: held
	}
	serve(t, srv)
	big := strings.Repeat("y", 64<<10)
	errsBy := map[string]error{}
	for _, addr := range srv.Addrs() {
		ctx := metadata.AppendToOutgoingContext(timeoutCtx(t), "x-big", big)
		_, err := dial(t, addr).Get(ctx, &echov1.EchoRequest{Text: "x"})
		errsBy[addr] = err
	}
	if (errsBy["inproc:"+name] == nil) != (errsBy["unix:@"+name] == nil) {
		t.Errorf("WithGRPCServerOptions(grpc.MaxHeaderListSize(4096)): Listen took an in-process address, yet a call with 64 KiB of metadata gets %v in-process and %v over the socket", errsBy["inproc:"+name], errsBy["unix:@"+name])
	}
}

//go:linkname grpcAddGlobalServerOptions google.golang.org/grpc/internal.AddGlobalServerOptions
var grpcAddGlobalServerOptions any

//go:linkname grpcClearGlobalServerOptions google.golang.org/grpc/internal.ClearGlobalServerOptions
var grpcClearGlobalServerOptions func()

// TestGlobalServerOptionRefusesInproc: grpc.NewServer applies grpc-go's
// global server options (registered by
// stats/opentelemetry/csm.EnableObservability, for one) to every server,
// so to sockets, but in-process calls never see them. A global stats
// handler makes Listen refuse in-process addresses, naming the global
// options rather than blaming an option the user never gave; with or
// without options of the user's own.
func TestGlobalServerOptionRefusesInproc(t *testing.T) {
	grpcAddGlobalServerOptions.(func(...grpc.ServerOption))(grpc.StatsHandler(&countingStats{}))
	t.Cleanup(grpcClearGlobalServerOptions)

	for name, opts := range map[string][]localgrpc.ServerOption{
		"none":      nil,
		"keepalive": {localgrpc.WithGRPCServerOptions(grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Minute}))},
	} {
		srv := newEchoServer(opts...)
		err := srv.Listen("inproc:" + uniqueName(t))
		srv.Stop()
		if err == nil || !strings.Contains(err.Error(), "global") {
			t.Errorf("options %s, with a global stats handler registered: Listen(inproc:) = %v, want a refusal naming grpc-go's global options", name, err)
		}
	}
}
