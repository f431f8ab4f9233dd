package localgrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// TestSocketOptionsLeaveInprocAlone: each socket option leaves a Server
// free to serve in-process addresses beside its sockets, and calls
// succeed on both.
func TestSocketOptionsLeaveInprocAlone(t *testing.T) {
	opts := map[string]localgrpc.ServerOption{
		"KeepaliveParams":      localgrpc.WithServerKeepaliveParams(keepalive.ServerParameters{Time: time.Hour}),
		"KeepaliveEnforcement": localgrpc.WithServerKeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Minute}),
		"WriteBufferSize":      localgrpc.WithServerWriteBufferSize(64 << 10),
		"ReadBufferSize":       localgrpc.WithServerReadBufferSize(64 << 10),
		"InitialWindowSize":    localgrpc.WithServerInitialWindowSize(1 << 20),
		"InitialConnWindow":    localgrpc.WithServerInitialConnWindowSize(1 << 20),
		"MaxConcurrentStreams": localgrpc.WithServerMaxConcurrentStreams(100),
		"ConnectionTimeout":    localgrpc.WithServerConnectionTimeout(time.Minute),
		"NumStreamWorkers":     localgrpc.WithServerNumStreamWorkers(2),
		"SharedWriteBuffer":    localgrpc.WithServerSharedWriteBuffer(true),
		"HeaderTableSize":      localgrpc.WithServerHeaderTableSize(8192),
	}
	for name, opt := range opts {
		t.Run(name, func(t *testing.T) {
			srv := newEchoServer(opt)
			n := uniqueName(t)
			serve(t, srv, "inproc:"+n, "unix:@"+n)
			for _, addr := range srv.Addrs() {
				if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
					t.Errorf("%s: a call beside %s: %v", addr, name, err)
				}
			}
		})
	}
}

// TestMaxConcurrentStreamsReachesSockets: WithServerMaxConcurrentStreams
// is grpc.MaxConcurrentStreams on the socket's grpc.Server, so with one
// stream open a second call over the same connection waits for it until
// its deadline. In-process calls are not counted against it.
func TestMaxConcurrentStreamsReachesSockets(t *testing.T) {
	srv := newEchoServer(localgrpc.WithServerMaxConcurrentStreams(1))
	n := uniqueName(t)
	serve(t, srv, "unix:@"+n, "inproc:"+n)
	want := map[string]codes.Code{"unix:@" + n: codes.DeadlineExceeded, "inproc:" + n: codes.OK}
	for addr, code := range want {
		c := dial(t, addr)
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		open, err := c.Update(ctx)
		if err == nil {
			err = open.Send(&echov1.EchoRequest{Text: "open"})
		}
		if err == nil {
			_, err = open.Recv() // the stream holds the connection's one slot
		}
		if err != nil {
			t.Fatalf("%s: opening a stream: %v", addr, err)
		}
		short, stop := context.WithTimeout(timeoutCtx(t), 300*time.Millisecond)
		_, err = c.Get(short, &echov1.EchoRequest{Text: "x"})
		stop()
		if status.Code(err) != code {
			t.Errorf("%s: a call beside an open stream under WithServerMaxConcurrentStreams(1): %v, want %v", addr, err, code)
		}
		cancel()
	}
}
