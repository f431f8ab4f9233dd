package inproc_test

import (
	"context"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stuckGet is an Echo whose Get runs until released, ignoring its
// context: a handler no drain can wait out.
type stuckGet struct {
	echov1.UnimplementedEchoServer
	started chan<- struct{}
	release <-chan struct{}
}

func (s stuckGet) Get(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	s.started <- struct{}{}
	<-s.release
	return &echov1.EchoResponse{}, nil
}

// TestStopCutsGracefulStop checks that Stop cuts short a GracefulStop
// waiting for a handler that ignores its context, as grpc.Server's Stop
// does: the caller gets its status at once, and GracefulStop returns once
// the handler has (grpc-go's stop waits for its handlers when graceful).
func TestStopCutsGracefulStop(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	returned := make(chan struct{})
	ch := inproc.New(inproc.WithExecution(inproc.Isolated))
	echov1.RegisterEchoServer(ch, stuckGet{started: started, release: release})
	call := async(func() error {
		defer close(returned)
		_, err := echov1.NewEchoClient(ch).Get(context.Background(), &echov1.EchoRequest{})
		return err
	})
	<-started
	graceful := make(chan struct{})
	go func() {
		defer close(graceful)
		ch.GracefulStop()
	}()
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		<-returned
	})
	ch.Stop()
	if err := receiveWithin(t, call, waitLimit, "the call to end after Stop"); status.Code(err) != codes.Unavailable {
		t.Errorf("the call in flight: %v, want Unavailable", err)
	}
	select {
	case <-graceful:
		t.Fatal("GracefulStop returned while the handler Stop cut short still ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	released = true
	receiveWithin(t, graceful, waitLimit, "GracefulStop to return once the handler did")
}
