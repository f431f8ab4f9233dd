package localgrpc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/status"
)

// TestShmRefusesWhatItCannotApply: shm: carries no transport credentials
// and is not grpc-go's, so a server or client configured with either
// refuses the address rather than skip what was configured.
func TestShmRefusesWhatItCannotApply(t *testing.T) {
	for name, opts := range map[string][]localgrpc.ServerOption{
		"transport-credentials": {localgrpc.WithTransportCredentials(local.NewCredentials())},
		"grpc-server-options":   {localgrpc.WithGRPCServerOptions(grpc.MaxHeaderListSize(4096))},
	} {
		srv := newEchoServer(opts...)
		if err := srv.Listen("shm:@" + uniqueName(t)); err == nil {
			t.Errorf("%s: Listen took a shm: address", name)
		}
		srv.Stop()
	}
	for name, opt := range map[string]localgrpc.ClientOption{
		"transport-credentials": localgrpc.WithClientTransportCredentials(insecure.NewCredentials()),
		"grpc-dial-options":     localgrpc.WithGRPCDialOptions(grpc.WithUserAgent("x")),
	} {
		if cc, err := localgrpc.NewClient("shm:@"+uniqueName(t), opt); err == nil {
			cc.Close()
			t.Errorf("%s: NewClient took a shm: address", name)
		}
	}
}

// TestGRPCClientOfShmSocket: a grpc-go client that dials a shm: socket
// fails at once with Unavailable, and its error says what the socket
// is, rather than waiting for an HTTP/2 server that never answers.
func TestGRPCClientOfShmSocket(t *testing.T) {
	path := socketPath(t)
	serve(t, newEchoServer(), "shm:"+path)
	cc, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: "x"})
	t.Logf("after %v: %v", time.Since(start), err)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shm:") {
		t.Errorf("a grpc-go client of a shm: socket: %v, want Unavailable saying it is a shm: socket", err)
	}
}

// TestShmClientOfGRPCSocket: NewClient("shm:...") of a socket grpc-go
// serves fails the call with Unavailable, saying why.
func TestShmClientOfGRPCSocket(t *testing.T) {
	path := socketPath(t)
	serve(t, newEchoServer(), "unix:"+path)
	c := dial(t, "shm:"+path)
	_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
	t.Log(err)
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a shm: client of a grpc-go socket: %v, want Unavailable", err)
	}
}
