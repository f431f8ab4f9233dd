package servertest

import (
	"context"
	"strings"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// EndReport is what a handler of EndedEcho reports once its call ended:
// what one more write or read of its returned, and the error its context
// ended with.
type EndReport struct{ Err, CtxErr error }

// EndedEcho's handlers say on Started that they run, wait for their call
// to end, then report on Reports what one more write or read of theirs
// returns (see EndedCalls).
type EndedEcho struct {
	echov1.UnimplementedEchoServer
	Started chan<- struct{}
	Reports chan<- EndReport
}

// Get sends its header once its call ended.
func (h EndedEcho) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	h.Started <- struct{}{}
	<-ctx.Done()
	h.Reports <- EndReport{grpc.SendHeader(ctx, metadata.Pairs("k", "v")), ctx.Err()}
	return nil, ctx.Err()
}

// Expand sends a message, or for "header" its header, once its call
// ended. For "flood" it sends until a Send fails: its client reads at
// most one response, so the handler is blocked in Send, or soon will be,
// when its call ends (an Inline one, driven by that read, surely is).
func (h EndedEcho) Expand(req *echov1.EchoRequest, s echov1.Echo_ExpandServer) error {
	h.Started <- struct{}{}
	var err error
	switch req.GetText() {
	case "flood":
		big := &echov1.EchoResponse{Text: strings.Repeat("x", 64<<10)}
		for err == nil {
			err = s.Send(big)
		}
		// grpc-go's may fail a Send on a closed connection before it
		// ends the handler's context.
		<-s.Context().Done()
	case "header":
		<-s.Context().Done()
		err = s.SendHeader(metadata.Pairs("k", "v"))
	default:
		<-s.Context().Done()
		err = s.Send(&echov1.EchoResponse{Text: "late"})
	}
	h.Reports <- EndReport{err, s.Context().Err()}
	return err
}

// Update receives once its call ended.
func (h EndedEcho) Update(s echov1.Echo_UpdateServer) error {
	h.Started <- struct{}{}
	<-s.Context().Done()
	_, err := s.Recv()
	h.Reports <- EndReport{err, s.Context().Err()}
	return err
}

// EndedCalls make the calls of EndedEcho, one for each write or read its
// handlers make once their call ended. Each returns once the client has
// what it waits for: the end, or for "send-blocked", one response.
var EndedCalls = []struct {
	Name string
	// Write says the handler's operation writes (SendHeader, Send): one
	// fails with Unavailable once the call's transport is gone, where a
	// read fails with its context's code.
	Write bool
	Call  func(ctx context.Context, c echov1.EchoClient) error
}{
	{"unary-send-header", true, func(ctx context.Context, c echov1.EchoClient) error {
		_, err := c.Get(ctx, &echov1.EchoRequest{})
		return err
	}},
	{"send-header", true, func(ctx context.Context, c echov1.EchoClient) error {
		return expandOnce(ctx, c, "header")
	}},
	{"send", true, func(ctx context.Context, c echov1.EchoClient) error {
		return expandOnce(ctx, c, "")
	}},
	{"send-blocked", true, func(ctx context.Context, c echov1.EchoClient) error {
		return expandOnce(ctx, c, "flood") // its Recv drives an Inline handler to its blocked Send
	}},
	{"recv", false, func(ctx context.Context, c echov1.EchoClient) error {
		s, err := c.Update(ctx)
		if err != nil {
			return err
		}
		_, err = s.Recv()
		return err
	}},
}

// expandOnce calls Expand with text and receives one response.
func expandOnce(ctx context.Context, c echov1.EchoClient, text string) error {
	s, err := c.Expand(ctx, &echov1.EchoRequest{Text: text})
	if err != nil {
		return err
	}
	_, err = s.Recv()
	return err
}
