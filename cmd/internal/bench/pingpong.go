package bench

import (
	"errors"
	"fmt"
	"io"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// pingPongCase is W3: Config.Callers Echo Update streams are opened before
// the timer, one a caller, and one op is one round on one of them: a Send
// and the Recv of its answer.
func pingPongCase(cfg Config, im impl) func(b *testing.B) error {
	return func(b *testing.B) error {
		cl, ctx, err := setUp(b, im, nil)
		if err != nil {
			return err
		}
		req := &echov1.EchoRequest{Text: cfg.text()}
		ops := make([]func() error, cfg.Callers)
		for i := range ops {
			stream, err := cl.update.Update(ctx)
			if err != nil {
				return err
			}
			b.Cleanup(func() { closeStream(b, stream) })
			ops[i] = func() error {
				if err := stream.Send(req); err != nil {
					return fmt.Errorf("Send: %w", err)
				}
				resp, err := stream.Recv()
				if err != nil {
					return fmt.Errorf("Recv: %w", err)
				}
				if resp.GetText() != req.GetText() {
					return fmt.Errorf("Update answered %q, want %q", resp.GetText(), req.GetText())
				}
				return nil
			}
		}
		return timed(b, ops)
	}
}

// closeStream ends a stream the way a client should, so its handler
// returns: CloseSend, then Recv until the handler's status arrives.
func closeStream(b *testing.B, s grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse]) {
	if err := s.CloseSend(); err != nil {
		b.Errorf("CloseSend: %v", err)
		return
	}
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			if !b.Failed() { // a failed case's stream may end any way
				b.Errorf("closing stream: %v", err)
			}
			return
		}
	}
}
