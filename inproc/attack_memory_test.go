package inproc_test

import (
	"runtime"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestAttackDeliveredMessagesRetained: a server stream sends 60 messages
// of 1 MiB, one at a time; the client receives each and drops it; then the
// stream stays open (the handler waits). The byte window (1 MiB by
// default) is meant to bound what a stream holds, and over grpc-go a
// message the application has received and dropped is garbage. inproc's
// queue keeps every delivered message in its slot until the slot is
// reused ("A slot keeps its message until it is reused"), so an idle
// stream pins up to window (64) already-delivered messages: here ~60 MiB
// per stream, whatever WithWindowBytes says.
func TestAttackDeliveredMessagesRetained(t *testing.T) {
	const (
		n    = 60
		size = 1 << 20
	)
	run := func(t *testing.T, c echov1.EchoClient, release chan struct{}) uint64 {
		before := heapInUse()
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if _, err := s.Recv(); err != nil {
				t.Fatalf("Recv %d: %v", i, err)
			}
		}
		after := heapInUse()
		close(release)
		for {
			if _, err := s.Recv(); err != nil {
				break
			}
		}
		if after < before {
			return 0
		}
		return after - before
	}
	handler := func(release chan struct{}) *funcEcho {
		return &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			for range n {
				if err := s.Send(&echov1.EchoResponse{Text: strings.Repeat("m", size)}); err != nil {
					return err
				}
			}
			<-release
			return nil
		}}
	}
	release := make(chan struct{})
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, handler(release)) }, nil, nil))
	refHeld := run(t, ref, release)
	t.Logf("grpc-go: the open stream holds %d MiB", refHeld>>20)
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("an Inline handler blocked on release blocks its caller")
		}
		release := make(chan struct{})
		c, _ := newEcho(t, m, handler(release), inproc.WithWindowBytes(1<<20))
		held := run(t, c, release)
		if held > refHeld+16<<20 {
			t.Errorf("the open stream holds %d MiB of messages its client received and dropped; grpc-go holds %d MiB; the byte window is 1 MiB", held>>20, refHeld>>20)
		}
	})
}
