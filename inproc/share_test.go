package inproc_test

import (
	"context"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
)

// TestShareImmutableResponse: a handler that answers every call with
// one prebuilt response that nobody ever modifies, a common pattern, safe
// over grpc-go (Marshal only reads the message; its size cache is written
// atomically). With Share, inproc's send calls proto.Size on it, which
// stores the message's sizeCache atomically, while another call's receive
// copies the same struct with a plain read (shallowCopy's
// dv.Elem().Set(sv.Elem())): a data race on a message that nobody changes.
func TestShareImmutableResponse(t *testing.T) {
	cached := &echov1.EchoResponse{Text: "the same answer for everybody"}
	srv := &funcEcho{get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		return cached, nil
	}}
	for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
		t.Run(exec.String(), func(t *testing.T) {
			ch := inproc.New(inproc.WithCopy(inproc.Share), inproc.WithExecution(exec))
			t.Cleanup(ch.Stop)
			echov1.RegisterEchoServer(ch, srv)
			c := echov1.NewEchoClient(ch)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 200 {
						r, err := c.Get(t.Context(), &echov1.EchoRequest{})
						if err != nil || r.GetText() != cached.Text {
							t.Errorf("Get: %v, %v", r, err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
