package localgrpc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// peerDeathBound is how soon the calls of a peer that died must end: the
// issue's 100 ms, with room for a busy machine's scheduler.
const peerDeathBound = 500 * time.Millisecond

// TestShmServerKilled kills the server's process while a unary call and
// a stream are in flight: both end with Unavailable at once.
func TestShmServerKilled(t *testing.T) {
	addr := "shm:@" + uniqueName(t)
	server := childServer(t, addr)
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := echov1.NewEchoClient(cc)
	ctx := timeoutCtx(t)
	unary := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, &echov1.EchoRequest{Text: "wait"})
		unary <- err
	}()
	s, err := c.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the unary call reaches its handler
	killed := time.Now()
	server.Kill()
	_, err = s.Recv()
	streamAfter := time.Since(killed)
	if status.Code(err) != codes.Unavailable {
		t.Errorf("the stream's Recv after the server died: %v, want Unavailable", err)
	}
	err = <-unary
	unaryAfter := time.Since(killed)
	if status.Code(err) != codes.Unavailable {
		t.Errorf("the unary call after the server died: %v, want Unavailable", err)
	}
	t.Logf("ended %v (stream) and %v (unary) after the kill", streamAfter, unaryAfter)
	if streamAfter > peerDeathBound || unaryAfter > peerDeathBound {
		t.Errorf("the calls ended %v and %v after the server died, want within %v", streamAfter, unaryAfter, peerDeathBound)
	}
	// The connection is gone; a new call finds no server.
	if _, err := c.Get(ctx, &echov1.EchoRequest{Text: "x"}); status.Code(err) != codes.Unavailable {
		t.Errorf("a call after the server died: %v, want Unavailable", err)
	}
}

// TestShmClientKilled kills a client's process while its unary call and
// stream are in flight: their handlers' contexts end at once, and the
// server goes on serving its other clients.
func TestShmClientKilled(t *testing.T) {
	svc := &scriptSvc{saw: make(chan string, 16)}
	srv := localgrpc.NewServer()
	echov1.RegisterEchoServer(srv, svc)
	addr := "shm:@" + uniqueName(t)
	serve(t, srv, addr)
	client := childClient(t, addr)
	if got := <-svc.saw; got != "waiting" {
		t.Fatalf("the handler told %q, want waiting", got)
	}
	killed := time.Now()
	client.Kill()
	var told []string
	for len(told) < 2 {
		select {
		case s := <-svc.saw:
			told = append(told, s)
		case <-time.After(5 * time.Second):
			t.Fatalf("after the client died the handlers told only %q", told)
		}
	}
	after := time.Since(killed)
	joined := strings.Join(told, "; ")
	if !strings.Contains(joined, "handler: context canceled") || !strings.Contains(joined, "update: Canceled") {
		t.Errorf("after the client died the handlers told %q, want their contexts cancelled", joined)
	}
	t.Logf("the handlers heard %v after the kill", after)
	if after > peerDeathBound {
		t.Errorf("the handlers heard %v after the client died, want within %v", after, peerDeathBound)
	}
	c := dial(t, addr)
	if r, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "still"}); err != nil || r.GetText() != "still" {
		t.Errorf("another client's call: %v, %v", r, err)
	}
}
