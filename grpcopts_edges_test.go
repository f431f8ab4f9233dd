package localgrpc_test

import (
	"strings"
	"testing"
	"time"
	_ "unsafe" // go:linkname, to register a global server option as csm.EnableObservability does

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

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
