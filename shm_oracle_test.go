package localgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// scriptSvc is an Echo service whose handlers do what the request's text
// says, and tell the test what they saw on saw.
type scriptSvc struct {
	echov1.UnimplementedEchoServer
	saw chan string
}

func (s *scriptSvc) tell(format string, args ...any) {
	select {
	case s.saw <- fmt.Sprintf(format, args...):
	default:
	}
}

func (s *scriptSvc) Get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	switch cmd, arg, _ := strings.Cut(req.GetText(), " "); cmd {
	case "header-trailer":
		grpc.SetHeader(ctx, metadata.Pairs("h", "1", "h-bin", "\x00\x01"))
		grpc.SetTrailer(ctx, metadata.Pairs("t", "2", "t", "3"))
		return &echov1.EchoResponse{Text: "ok"}, nil
	case "details":
		grpc.SetHeader(ctx, metadata.Pairs("h", "x"))
		st, _ := status.New(codes.FailedPrecondition, "not yet").WithDetails(durationpb.New(time.Second))
		return nil, st.Err()
	case "plain-error":
		return nil, errors.New("plain")
	case "wait":
		s.tell("waiting")
		<-ctx.Done()
		s.tell("handler: %v", ctx.Err())
		return nil, ctx.Err()
	case "md":
		md, _ := metadata.FromIncomingContext(ctx)
		keys := make([]string, 0, len(md))
		for k, v := range md {
			if k == ":authority" || k == "user-agent" {
				continue // transport-specific
			}
			keys = append(keys, fmt.Sprintf("%s=%q", k, v))
		}
		sort.Strings(keys)
		_, hasDeadline := ctx.Deadline()
		return &echov1.EchoResponse{Text: strings.Join(keys, " ") + fmt.Sprintf(" deadline=%v", hasDeadline)}, nil
	case "peer":
		cred, ok := localgrpc.PeerCredFromContext(ctx)
		p, _ := peer.FromContext(ctx)
		return &echov1.EchoResponse{Text: fmt.Sprintf("cred=%v pid-is-client=%v uid=%d net=%s", ok, cred.PID == int32(os.Getpid()), cred.UID, p.Addr.Network())}, nil
	case "big":
		n := 0
		fmt.Sscan(arg, &n)
		return &echov1.EchoResponse{Text: strings.Repeat("x", n)}, nil
	}
	return &echov1.EchoResponse{Text: req.GetText()}, nil
}

func (s *scriptSvc) Expand(req *echov1.EchoRequest, ss grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	ss.SetHeader(metadata.Pairs("sh", "a"))
	words := strings.Fields(req.GetText())
	for _, w := range words {
		if w == "fail" {
			ss.SetTrailer(metadata.Pairs("st", "b"))
			return status.Error(codes.Aborted, "told to fail")
		}
		if err := ss.Send(&echov1.EchoResponse{Text: w}); err != nil {
			return err
		}
	}
	ss.SetTrailer(metadata.Pairs("st", "c"))
	return nil
}

func (s *scriptSvc) Collect(ss grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	var words []string
	for {
		r, err := ss.Recv()
		if err == io.EOF {
			return ss.SendAndClose(&echov1.EchoResponse{Text: strings.Join(words, " ")})
		}
		if err != nil {
			s.tell("collect: %v", status.Code(err))
			return err
		}
		if r.GetText() == "stop" {
			return status.Error(codes.OutOfRange, "stopped early")
		}
		words = append(words, r.GetText())
	}
}

func (s *scriptSvc) Update(ss grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	for {
		r, err := ss.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			s.tell("update: %v", status.Code(err))
			return err
		}
		if err := ss.Send(&echov1.EchoResponse{Text: r.GetText()}); err != nil {
			return err
		}
	}
}

// outcome sums up a call's result for comparison across transports.
func outcome(texts []string, header, trailer metadata.MD, err error) string {
	st := status.Convert(err)
	var details []string
	for _, d := range st.Details() {
		details = append(details, fmt.Sprint(d))
	}
	return fmt.Sprintf("texts=%q code=%v msg=%q details=%v header=%v trailer=%v", texts, st.Code(), st.Message(), details, mdString(header), mdString(trailer))
}

func mdString(md metadata.MD) string {
	keys := make([]string, 0, len(md))
	for k, v := range md {
		keys = append(keys, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(keys)
	return "{" + strings.Join(keys, " ") + "}"
}

// shmOracleCases are calls whose outcome over shm: must be grpc-go's
// over a unix socket.
var shmOracleCases = []struct {
	name string
	call func(ctx context.Context, c echov1.EchoClient) string
}{
	{"unary/header-trailer", func(ctx context.Context, c echov1.EchoClient) string {
		var h, t metadata.MD
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: "header-trailer"}, grpc.Header(&h), grpc.Trailer(&t))
		return outcome([]string{r.GetText()}, h, t, err)
	}},
	{"unary/details", func(ctx context.Context, c echov1.EchoClient) string {
		var h, t metadata.MD
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: "details"}, grpc.Header(&h), grpc.Trailer(&t))
		return outcome([]string{r.GetText()}, h, t, err)
	}},
	{"unary/plain-error", func(ctx context.Context, c echov1.EchoClient) string {
		var h, t metadata.MD
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: "plain-error"}, grpc.Header(&h), grpc.Trailer(&t))
		return outcome([]string{r.GetText()}, h, t, err)
	}},
	{"unary/deadline", func(ctx context.Context, c echov1.EchoClient) string {
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := c.Get(ctx, &echov1.EchoRequest{Text: "wait"})
		// grpc-go's message says whether the client's timer or the
		// server's reset came first: the code is what is the same.
		return fmt.Sprint(status.Code(err))
	}},
	{"unary/metadata", func(ctx context.Context, c echov1.EchoClient) string {
		ctx = metadata.AppendToOutgoingContext(ctx, "k", "v1", "k", "v2", "b-bin", "\xff\x00")
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: "md"})
		return outcome([]string{r.GetText()}, nil, nil, err)
	}},
	{"unary/peer", func(ctx context.Context, c echov1.EchoClient) string {
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: "peer"})
		return outcome([]string{r.GetText()}, nil, nil, err)
	}},
	{"unary/client-recv-limit", func(ctx context.Context, c echov1.EchoClient) string {
		_, err := c.Get(ctx, &echov1.EchoRequest{Text: "big 2000"}, grpc.MaxCallRecvMsgSize(1000))
		return fmt.Sprint(status.Code(err))
	}},
	{"unary/server-recv-limit", func(ctx context.Context, c echov1.EchoClient) string {
		_, err := c.Get(ctx, &echov1.EchoRequest{Text: strings.Repeat("y", 5<<20)})
		return fmt.Sprint(status.Code(err))
	}},
	{"unary/client-send-limit", func(ctx context.Context, c echov1.EchoClient) string {
		_, err := c.Get(ctx, &echov1.EchoRequest{Text: strings.Repeat("y", 100)}, grpc.MaxCallSendMsgSize(10))
		return fmt.Sprint(status.Code(err))
	}},
	{"unary/1MiB", func(ctx context.Context, c echov1.EchoClient) string {
		text := strings.Repeat("z", 1<<20)
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: text})
		return fmt.Sprintf("same=%v %v", r.GetText() == text, status.Code(err))
	}},
	{"unary/unknown-method", func(ctx context.Context, c echov1.EchoClient) string {
		err := c.(interface {
			Conn() grpc.ClientConnInterface
		}).Conn().Invoke(ctx, "/echo.v1.Echo/Nope", &echov1.EchoRequest{}, &echov1.EchoResponse{})
		return outcome(nil, nil, nil, err)
	}},
	{"server-stream/ok", func(ctx context.Context, c echov1.EchoClient) string {
		return expandOutcome(ctx, c, "a b c")
	}},
	{"server-stream/fail", func(ctx context.Context, c echov1.EchoClient) string {
		return expandOutcome(ctx, c, "a fail c")
	}},
	{"server-stream/many", func(ctx context.Context, c echov1.EchoClient) string {
		words := make([]string, 10000)
		for i := range words {
			words[i] = fmt.Sprint(i)
		}
		s, err := c.Expand(ctx, &echov1.EchoRequest{Text: strings.Join(words, " ")})
		if err != nil {
			return err.Error()
		}
		for i := 0; ; i++ {
			r, err := s.Recv()
			if err == io.EOF {
				return fmt.Sprintf("all %d in order", i)
			}
			if err != nil || r.GetText() != words[i] {
				return fmt.Sprintf("message %d: %q, %v", i, r.GetText(), err)
			}
		}
	}},
	{"client-stream/ok", func(ctx context.Context, c echov1.EchoClient) string {
		s, _ := c.Collect(ctx)
		for _, w := range []string{"x", "y", "z"} {
			s.Send(&echov1.EchoRequest{Text: w})
		}
		r, err := s.CloseAndRecv()
		h, _ := s.Header()
		return outcome([]string{r.GetText()}, h, s.Trailer(), err)
	}},
	{"client-stream/early-status", func(ctx context.Context, c echov1.EchoClient) string {
		s, _ := c.Collect(ctx)
		s.Send(&echov1.EchoRequest{Text: "stop"})
		r, err := s.CloseAndRecv()
		return outcome([]string{r.GetText()}, nil, s.Trailer(), err)
	}},
	{"bidi/ping-pong", func(ctx context.Context, c echov1.EchoClient) string {
		s, _ := c.Update(ctx)
		var got []string
		for _, w := range []string{"p", "q", "r"} {
			s.Send(&echov1.EchoRequest{Text: w})
			r, err := s.Recv()
			if err != nil {
				return err.Error()
			}
			got = append(got, r.GetText())
		}
		s.CloseSend()
		_, err := s.Recv()
		return outcome(got, nil, s.Trailer(), err)
	}},
	{"bidi/cancel", func(ctx context.Context, c echov1.EchoClient) string {
		ctx, cancel := context.WithCancel(ctx)
		s, _ := c.Update(ctx)
		s.Send(&echov1.EchoRequest{Text: "p"})
		s.Recv()
		cancel()
		_, err := s.Recv()
		return outcome(nil, nil, nil, err)
	}},
}

func expandOutcome(ctx context.Context, c echov1.EchoClient, text string) string {
	s, err := c.Expand(ctx, &echov1.EchoRequest{Text: text})
	if err != nil {
		return err.Error()
	}
	var texts []string
	for {
		r, err := s.Recv()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			h, _ := s.Header()
			return outcome(texts, h, s.Trailer(), err)
		}
		texts = append(texts, r.GetText())
	}
}

// TestShmAsUnix makes each call of shmOracleCases to one server over a
// unix socket (grpc-go) and over shm:, and wants the same outcome.
func TestShmAsUnix(t *testing.T) {
	svc := &scriptSvc{saw: make(chan string, 16)}
	srv := localgrpc.NewServer()
	echov1.RegisterEchoServer(srv, svc)
	unixAddr, shmAddr := "unix:"+socketPath(t), "shm:@"+uniqueName(t)
	serve(t, srv, unixAddr, shmAddr)
	clients := map[string]echov1.EchoClient{}
	for _, addr := range []string{unixAddr, shmAddr} {
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		clients[addr] = connClient{echov1.NewEchoClient(cc), cc}
	}
	for _, tc := range shmOracleCases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.call(timeoutCtx(t), clients[unixAddr])
			got := tc.call(timeoutCtx(t), clients[shmAddr])
			if got != want {
				t.Errorf("shm:\n got %s\nwant %s (grpc-go over unix)", got, want)
			}
		})
	}
}

// connClient is an Echo client that also gives its connection.
type connClient struct {
	echov1.EchoClient
	cc grpc.ClientConnInterface
}

func (c connClient) Conn() grpc.ClientConnInterface { return c.cc }

// TestShmLargeMessagesAsUnix: a server that takes and sends messages of
// 16 MiB, and a client that takes them too, pass 6 MiB each way over
// shm: as over unix:; a client with grpc-go's default receive limit
// refuses the response on both.
func TestShmLargeMessagesAsUnix(t *testing.T) {
	srv := localgrpc.NewServer(localgrpc.WithServerMaxRecvMsgSize(16<<20), localgrpc.WithServerMaxSendMsgSize(16<<20))
	echov1.RegisterEchoServer(srv, &scriptSvc{})
	unixAddr, shmAddr := "unix:"+socketPath(t), "shm:@"+uniqueName(t)
	serve(t, srv, unixAddr, shmAddr)
	text := strings.Repeat("L", 6<<20)
	for _, addr := range []string{unixAddr, shmAddr} {
		c := dial(t, addr)
		r, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: text}, grpc.MaxCallRecvMsgSize(16<<20))
		if err != nil || r.GetText() != text {
			t.Errorf("%s: a 6 MiB call: %d bytes back, %v", addr, len(r.GetText()), err)
		}
		_, err = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: text})
		if status.Code(err) != codes.ResourceExhausted {
			t.Errorf("%s: a 6 MiB response to a client of the default limit: %v, want ResourceExhausted", addr, err)
		}
	}
}
