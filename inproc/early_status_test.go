package inproc_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestSendAfterFailedRecv: a bidi handler whose Recv fails (the
// request is over the server's receive limit) and which then sends a
// message anyway (say, an error response) before returning. grpc-go's
// server wrote the ResourceExhausted status when Recv failed, so the
// handler's Send fails and the client's first Recv gives
// ResourceExhausted. inproc's fail() closes toClient with the status, but
// the handler's later SendMsg still pushes behind the close: the client
// receives the message, then the status.
func TestSendAfterFailedRecv(t *testing.T) {
	const limit = 100
	sendErrs := make(chan error, 10)
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		if _, err := s.Recv(); err == nil {
			return status.Error(codes.FailedPrecondition, "the request should have been refused")
		}
		sendErrs <- s.Send(&echov1.EchoResponse{Text: "after"})
		return nil
	}}
	run := func(t *testing.T, c echov1.EchoClient) (string, error) {
		s, err := c.Update(timeoutCtx(t))
		if err != nil {
			return "", err
		}
		if err := s.Send(&echov1.EchoRequest{Text: strings.Repeat("x", 2*limit)}); err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		r, err := s.Recv()
		if err != nil {
			return "", err
		}
		return r.GetText(), nil
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, []grpc.ServerOption{grpc.MaxRecvMsgSize(limit)}, nil))
	got, err := run(t, ref)
	t.Logf("grpc-go: client Recv gives %q, %v; the handler's Send after the failed Recv gives %v", got, err, receive(t, sendErrs, "the handler's send"))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("reference: grpc-go gives %q, %v; want ResourceExhausted", got, err)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		for len(sendErrs) > 0 {
			<-sendErrs
		}
		c, _ := newEcho(t, m, srv, inproc.WithServerMaxRecvMsgSize(limit))
		got, err := run(t, c)
		var sendErr any = "(the handler's Send has not returned)"
		select {
		case e := <-sendErrs:
			sendErr = e
		default:
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("client Recv gives %q, %v; the handler's Send gave %v; grpc-go gives ResourceExhausted and the Send fails", got, err, sendErr)
		}
	})
}

// TestSendAfterFailedSend: as above, with the handler's first Send
// failing (over WithServerMaxSendMsgSize) and its second, small one
// going through.
func TestSendAfterFailedSend(t *testing.T) {
	const limit = 100
	sendErrs := make(chan error, 10)
	srv := &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
		if err := s.Send(&echov1.EchoResponse{Text: strings.Repeat("x", 2*limit)}); err == nil {
			return status.Error(codes.FailedPrecondition, "the response should have been refused")
		}
		sendErrs <- s.Send(&echov1.EchoResponse{Text: "small"})
		return nil
	}}
	run := func(t *testing.T, c echov1.EchoClient) (string, error) {
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			return "", err
		}
		r, err := s.Recv()
		if err != nil {
			return "", err
		}
		return r.GetText(), nil
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, []grpc.ServerOption{grpc.MaxSendMsgSize(limit)}, nil))
	got, err := run(t, ref)
	t.Logf("grpc-go: client Recv gives %q, %v; the handler's second Send gives %v", got, err, receive(t, sendErrs, "the handler's send"))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("reference: grpc-go gives %q, %v; want ResourceExhausted", got, err)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		for len(sendErrs) > 0 {
			<-sendErrs
		}
		c, _ := newEcho(t, m, srv, inproc.WithServerMaxSendMsgSize(limit))
		got, err := run(t, c)
		var sendErr any = "(the handler's Send has not returned)"
		select {
		case e := <-sendErrs:
			sendErr = e
		default:
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("client Recv gives %q, %v; the handler's second Send gave %v; grpc-go gives ResourceExhausted and the Send fails", got, err, sendErr)
		}
	})
}

// TestClientSendNotBlockedAfterStatus: a client-streaming call whose
// first request is over the server's limit. The handler's Recv fails and
// grpc-go's server sends the status at once; the handler then takes its
// time (here: it waits for the test to end, ignoring its context). Over
// grpc-go the client's further Sends return io.EOF as soon as the status
// (and RST_STREAM) arrives, and CloseAndRecv gives ResourceExhausted. In
// inproc (Isolated), fail() sends the status but does not abandon
// toServer, so once the window is full the client's Send parks until the
// handler returns.
func TestClientSendNotBlockedAfterStatus(t *testing.T) {
	const limit = 100
	release := make(chan struct{})
	srv := &funcEcho{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		_, err := s.Recv()
		<-release
		return err
	}}
	run := func(t *testing.T, c echov1.EchoClient) error {
		s, err := c.Collect(timeoutCtx(t))
		if err != nil {
			return err
		}
		if err := s.Send(&echov1.EchoRequest{Text: strings.Repeat("x", 2*limit)}); err != nil {
			return err
		}
		done := async(func() error {
			for range 1000 {
				if err := s.Send(&echov1.EchoRequest{Text: "small"}); err != nil {
					return err
				}
			}
			return nil
		})
		select {
		case err := <-done:
			// nil: every Send went out before the status came back.
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
		case <-time.After(2 * time.Second):
			return errors.New("the client's Send is still blocked 2s after the server sent its status")
		}
		_, err = s.CloseAndRecv()
		return err
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, []grpc.ServerOption{grpc.MaxRecvMsgSize(limit)}, nil))
	t.Cleanup(func() { close(release) }) // runs before the servers stop
	if err := run(t, ref); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("reference: grpc-go gives %v; want ResourceExhausted", err)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("an Inline handler that blocks blocks its caller, as documented")
		}
		c, _ := newEcho(t, m, srv, inproc.WithServerMaxRecvMsgSize(limit), inproc.WithWindow(4))
		if err := run(t, c); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("inproc: %v; grpc-go: ResourceExhausted", err)
		}
	})
}

// TestTrailerWithEarlyStatus: the handler sets a trailer, then its
// Recv fails (the request is over the server's limit), and it returns a
// little later. grpc-go's server wrote the status, with the trailer set so
// far, when Recv failed: the client's Recv gives ResourceExhausted and
// Trailer() gives the trailer at once. inproc's fail() sends the status
// early; Trailer() once answered nil until the handler had returned, so a
// client that read the trailer right after the error found none.
func TestTrailerWithEarlyStatus(t *testing.T) {
	const limit = 100
	release := make(chan struct{})
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		s.SetTrailer(metadata.Pairs("k", "v"))
		_, err := s.Recv()
		<-release
		return err
	}}
	run := func(t *testing.T, c echov1.EchoClient) (error, metadata.MD) {
		s, err := c.Update(timeoutCtx(t))
		if err != nil {
			return err, nil
		}
		if err := s.Send(&echov1.EchoRequest{Text: strings.Repeat("x", 2*limit)}); err != nil && !errors.Is(err, io.EOF) {
			return err, nil
		}
		_, err = s.Recv()
		return err, s.Trailer()
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, []grpc.ServerOption{grpc.MaxRecvMsgSize(limit)}, nil))
	t.Cleanup(func() { close(release) })
	refErr, refTrailer := run(t, ref)
	if status.Code(refErr) != codes.ResourceExhausted || len(refTrailer["k"]) != 1 {
		t.Fatalf("reference: grpc-go gives %v, trailer %v", refErr, refTrailer)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("an Inline handler that blocks blocks its caller, as documented")
		}
		c, _ := newEcho(t, m, srv, inproc.WithServerMaxRecvMsgSize(limit))
		err, tr := run(t, c)
		if status.Code(err) != codes.ResourceExhausted || len(tr["k"]) != 1 {
			t.Errorf("inproc: %v, trailer %v; grpc-go: %v, trailer %v", err, tr, refErr, refTrailer)
		}
	})
}
