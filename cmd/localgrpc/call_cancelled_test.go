package main

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// enteredStalling is stalling, telling entered of each Get it holds.
type enteredStalling struct {
	stalling
	entered chan<- struct{}
}

func (s enteredStalling) Get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	s.entered <- struct{}{}
	return s.stalling.Get(ctx, req)
}

// Calls of -n in flight when the user interrupts are cancelled by them:
// reported apart, neither as errors nor as calls made.
func TestCallMeasureCancelledApart(t *testing.T) {
	const n = 4
	entered := make(chan struct{}, n)
	s := localgrpc.NewServer()
	echov1.RegisterEchoServer(s, enteredStalling{entered: entered})
	addr := "unix:@localgrpc-test-" + rand.Text()
	if err := s.Listen(addr); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	t.Cleanup(func() { s.Stop(); <-served })

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for range n {
			<-entered
		}
		cancel() // every call is in flight
	}()
	code, stdout, stderr := runCLI(ctx, "call", "get", "--address", addr, "-n", "4", "-c", "4")
	cancel()
	if code != exitFailure || !strings.Contains(stderr, "interrupted after 0 of 4 calls") {
		t.Errorf("exit status %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "\nerrors  0\n") || strings.Contains(stdout, "Canceled") {
		t.Errorf("the cancelled calls are counted as errors:\n%s", stdout)
	}
	if !strings.Contains(stdout, "cancelled 4 calls") || !strings.Contains(stdout, "count   0 calls") {
		t.Errorf("the cancelled calls are not reported apart:\n%s", stdout)
	}
}
