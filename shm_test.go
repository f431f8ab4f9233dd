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

// sleepyEcho's Get sleeps before it answers, once it said it began.
type sleepyEcho struct {
	echov1.UnimplementedEchoServer
	began chan struct{}
}

func (e sleepyEcho) Get(_ context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	e.began <- struct{}{}
	time.Sleep(200 * time.Millisecond)
	return &echov1.EchoResponse{Text: r.GetText()}, nil
}

// TestGracefulStopDeliversCallsInFlight: a GracefulStop while a unary
// call's handler runs lets its response reach the client, over shm: as
// over unix:, every time.
func TestGracefulStopDeliversCallsInFlight(t *testing.T) {
	for _, kind := range []string{"unix", "shm"} {
		for i := range 5 {
			srv := localgrpc.NewServer()
			e := sleepyEcho{began: make(chan struct{}, 1)}
			echov1.RegisterEchoServer(srv, e)
			addr := map[string]string{"unix": "unix:" + socketPath(t), "shm": "shm:@" + uniqueName(t)}[kind]
			serve(t, srv, addr)
			c := dial(t, addr)
			go func() {
				<-e.began
				srv.GracefulStop()
			}()
			r, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "drained"})
			if err != nil || r.GetText() != "drained" {
				t.Errorf("%s, try %d: the call in flight at GracefulStop: %q, %v", kind, i, r.GetText(), err)
			}
		}
	}
}

// endingCollect's Collect says when it begins, and when it returns.
type endingCollect struct {
	echov1.UnimplementedEchoServer
	began chan struct{}
	ended chan error
}

func (e endingCollect) Collect(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	e.began <- struct{}{}
	for {
		if _, err := s.Recv(); err != nil {
			e.ended <- err
			return err
		}
	}
}

// TestClientSideFinishEndsHandler: a client stream that ends on the
// client's side alone (a Send after CloseSend) has its handler run and
// end, over shm: as over unix:, where grpc-go runs a stream's handler once
// its headers came, whatever follows them.
func TestClientSideFinishEndsHandler(t *testing.T) {
	for _, kind := range []string{"unix", "shm"} {
		srv := localgrpc.NewServer()
		e := endingCollect{began: make(chan struct{}, 1), ended: make(chan error, 1)}
		echov1.RegisterEchoServer(srv, e)
		addr := map[string]string{"unix": "unix:" + socketPath(t), "shm": "shm:@" + uniqueName(t)}[kind]
		serve(t, srv, addr)
		c := dial(t, addr)
		for i := range 20 {
			s, err := c.Collect(timeoutCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			s.Send(&echov1.EchoRequest{Text: "a"})
			s.CloseSend()
			if err := s.Send(&echov1.EchoRequest{Text: "b"}); status.Code(err) != codes.Internal {
				t.Errorf("%s: Send after CloseSend: %v, want Internal", kind, err)
			}
			select {
			case <-e.began:
			case <-time.After(waitLimit):
				t.Fatalf("%s, try %d: the handler did not run", kind, i)
			}
			select {
			case <-e.ended:
			case <-time.After(waitLimit):
				t.Fatalf("%s, try %d: the handler still waits %v after its client's stream ended", kind, i, waitLimit)
			}
		}
	}
}
