//go:build linux

package shm_test

import (
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc/codes"
)

// TestGoAwayServesCallsSentBeforeTheAnswer has the server go away while
// a client's call is on its way: the call, sent before the client heard,
// is served, as grpc-go serves the streams opened before its GOAWAY
// reached the client; the server closes once the client answered and no
// call is left.
func TestGoAwayServesCallsSentBeforeTheAnswer(t *testing.T) {
	nc, r, sc := rawClient(t, 1<<20)
	sc.GoAway()
	req := []byte{10, 2, 'h', 'i'} // EchoRequest{Text: "hi"}
	b := getHeaders(1)
	b = shmwire.AppendFrame(b, 1, shmwire.Message, 0, req)
	b = shmwire.AppendFrame(b, 1, shmwire.Message, shmwire.End, nil)
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	if got := callStatus(t, nc, r, 1); got != codes.OK {
		t.Fatalf("a call sent before the client heard of the GoAway ended with %v, want OK", got)
	}
	select {
	case <-sc.Done():
		t.Fatal("the server closed before the client answered its GoAway")
	case <-time.After(50 * time.Millisecond):
	}
	// The answer: no call is left, so the server closes.
	if _, err := nc.Write(shmwire.AppendFrame(nil, 0, shmwire.GoAway, 0, (&shmwire.Away{Last: 1}).Append(nil))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close once the client answered and no call was left")
	}
}
