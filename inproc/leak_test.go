package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// streamMessages is how many messages each stream of the leak test would
// carry if nothing cancelled it.
const streamMessages = 8

// Where a stream of the leak test is cancelled.
const (
	cancelBeforeStart = iota // before NewStream
	cancelBeforeFirst        // after NewStream, before any message
	cancelMidStream          // after some messages
	cancelAfterLast          // after the stream ended well
	cancelPoints
)

// TestNoGoroutineLeak runs 10,000 streams per mode (1,000 with -short) on
// 8 workers, of every kind, cancelled at random points, with handlers that
// ignore their context: they send until Send fails, or finish. Afterwards
// no goroutine may remain, every handler must have returned, and
// GracefulStop must find no call in flight.
func TestNoGoroutineLeak(t *testing.T) {
	streams, workers := 10_000, 8
	if testing.Short() {
		streams = 1_000
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		before := goleak.IgnoreCurrent()
		var started, ended atomic.Int64
		count := func() func() {
			started.Add(1)
			return func() { ended.Add(1) }
		}
		srv := &funcEcho{
			expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				defer count()()
				for i := range streamMessages {
					if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(i)}); err != nil {
						return err
					}
				}
				return nil
			},
			collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				defer count()()
				return echo.Server{}.Collect(s)
			},
			update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				defer count()()
				return (echo.Server{}).Update(s)
			},
		}
		c, ch := newEcho(t, m, srv, inproc.WithWindow(2))

		seed := rand.Uint64()
		jobs := make(chan int)
		var failures atomic.Int64
		var firstErr sync.Once
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				for i := range jobs {
					if err := leakyStream(t.Context(), c, r.IntN(3), r.IntN(cancelPoints), r); err != nil {
						failures.Add(1)
						firstErr.Do(func() { t.Errorf("stream %d (seed %d): %v", i, seed, err) })
					}
				}
			})
		}
		for i := range streams {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		if n := failures.Load(); n > 0 {
			t.Errorf("%d of %d streams failed", n, streams)
		}

		if err := goleak.Find(before); err != nil {
			t.Fatalf("goroutines remain after %d streams: %v", streams, err)
		}
		// A quarter of the streams are cancelled before they start, and
		// an Inline handler whose client cancels before driving it never
		// runs: a third is the least a test that exercises handlers has.
		if s := started.Load(); s < int64(streams/3) {
			t.Errorf("only %d of %d handlers ran: the test exercises too little", s, streams)
		}
		if s, e := started.Load(), ended.Load(); s != e {
			t.Errorf("%d handlers started, %d returned", s, e)
		}
		receive(t, async(func() error { ch.GracefulStop(); return nil }), "GracefulStop with no call in flight")
	})
}

// leakyStream runs one stream of the given kind (0 server-stream, 1
// client-stream, 2 bidi), cancelling it at the given point. It returns an
// error if a call fails other than as cancellation may make it fail.
func leakyStream(parent context.Context, c echov1.EchoClient, kind, point int, r *rand.Rand) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	if point == cancelBeforeStart {
		cancel()
	}
	// cancelled says err is what a cancelled call may give.
	cancelled := func(what string, err error) error {
		if err == nil || errors.Is(err, io.EOF) || status.Code(err) == codes.Canceled {
			return nil
		}
		return fmt.Errorf("%s: %w, want Canceled", what, err)
	}
	mid := 1 + r.IntN(streamMessages-1)

	switch kind {
	case 0: // server-stream
		s, err := c.Expand(ctx, &echov1.EchoRequest{})
		if point == cancelBeforeStart {
			if err != nil {
				return cancelled("Expand", err)
			}
			_, err = echotest.RecvAll(s.Recv)
			wantCanceled := status.Code(err) == codes.Canceled
			if !wantCanceled {
				return fmt.Errorf("Recv on a cancelled stream: %v, want Canceled", err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		n := 0
		switch point {
		case cancelBeforeFirst:
			cancel()
		case cancelMidStream:
			for ; n < mid; n++ {
				if _, err := s.Recv(); err != nil {
					return fmt.Errorf("Recv %d: %w", n, err)
				}
			}
			cancel()
		}
		texts, err := echotest.RecvAll(s.Recv)
		if point == cancelAfterLast {
			if err != nil || len(texts) != streamMessages {
				return fmt.Errorf("got %d messages and %v, want %d and EOF", len(texts), err, streamMessages)
			}
			cancel()
			return nil
		}
		return cancelled("Recv after cancel", err)

	case 1: // client-stream
		s, err := c.Collect(ctx)
		if err != nil {
			if point == cancelBeforeStart {
				return cancelled("Collect", err)
			}
			return err
		}
		n := 0
		switch point {
		case cancelBeforeFirst:
			cancel()
		case cancelMidStream:
			for ; n < mid; n++ {
				if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
					return fmt.Errorf("Send %d: %w", n, err)
				}
			}
			cancel()
		case cancelAfterLast:
			for ; n < streamMessages; n++ {
				if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
					return fmt.Errorf("Send %d: %w", n, err)
				}
			}
			if _, err := s.CloseAndRecv(); err != nil {
				return fmt.Errorf("CloseAndRecv: %w", err)
			}
			cancel()
			return nil
		}
		if err := s.Send(&echov1.EchoRequest{Text: "late"}); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("Send after cancel: %w, want nil or io.EOF", err)
		}
		_, err = s.CloseAndRecv()
		if status.Code(err) != codes.Canceled {
			return fmt.Errorf("CloseAndRecv after cancel: %v, want Canceled", err)
		}
		return nil

	default: // bidi
		s, err := c.Update(ctx)
		if err != nil {
			if point == cancelBeforeStart {
				return cancelled("Update", err)
			}
			return err
		}
		switch point {
		case cancelBeforeFirst:
			cancel()
		case cancelMidStream:
			if r.IntN(2) == 0 {
				// Ping-pong some rounds.
				for n := range mid {
					if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
						return fmt.Errorf("Send %d: %w", n, err)
					}
					if _, err := s.Recv(); err != nil {
						return fmt.Errorf("Recv %d: %w", n, err)
					}
				}
			} else {
				// Send without reading, so that the handler may be blocked
				// sending its answers (the window is 2).
				for n := range min(mid, 3) {
					if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
						return fmt.Errorf("Send %d: %w", n, err)
					}
				}
			}
			cancel()
		case cancelAfterLast:
			for n := range streamMessages {
				if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
					return fmt.Errorf("Send %d: %w", n, err)
				}
				if _, err := s.Recv(); err != nil {
					return fmt.Errorf("Recv %d: %w", n, err)
				}
			}
			if err := s.CloseSend(); err != nil {
				return err
			}
			if _, err := s.Recv(); !errors.Is(err, io.EOF) {
				return fmt.Errorf("Recv at the end: %v, want io.EOF", err)
			}
			cancel()
			return nil
		}
		for {
			_, err := s.Recv()
			if err == nil {
				continue // an answer sent before the cancellation
			}
			if status.Code(err) != codes.Canceled {
				return fmt.Errorf("Recv after cancel: %v, want Canceled", err)
			}
			return nil
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestDeliveredMessagesNotRetained: a server stream sends 60 messages
// of 1 MiB, one at a time; the client receives each and drops it; then the
// stream stays open (the handler waits). The byte window (1 MiB by
// default) is meant to bound what a stream holds, and over grpc-go a
// message the application has received and dropped is garbage. inproc's
// queue keeps every delivered message in its slot until the slot is
// reused ("A slot keeps its message until it is reused"), so an idle
// stream pins up to window (64) already-delivered messages: here ~60 MiB
// per stream, whatever WithWindowBytes says.
func TestDeliveredMessagesNotRetained(t *testing.T) {
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

// freshDescriptor builds, anew, a proto3 file holding message
// attack2.Req { string text = 1; }: what a proxy that resolves
// descriptors per request (through server reflection, say) sends.
func freshDescriptor(t *testing.T, i int) protoreflect.MessageDescriptor {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String(fmt.Sprintf("attack2/fresh%d.proto", i)),
		Package: proto.String("attack2"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Req"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name:     proto.String("text"),
				Number:   proto.Int32(1),
				Type:     descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				JsonName: proto.String("text"),
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, new(protoregistry.Files))
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

// TestFreshDescriptorsNotRetained: a client sends dynamic messages
// whose descriptors it builds per call, then drops them. Over grpc-go
// nothing of a call is kept once it ends; inproc keeps, per Go type and
// descriptor, the plans it made (typedPlans, utf8Plans: package-level
// sync.Maps keyed by planKey{Go type, descriptor}), each holding the
// descriptor and through it its whole file, for ever, even past the
// Channel's Stop: about 3.5 KB a call here, without bound.
func TestFreshDescriptorsNotRetained(t *testing.T) {
	const n = 3000
	ch := newChannel(t, modes[0])
	ch.RegisterService(anyDesc, &anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }})
	call := func(i int) {
		md := freshDescriptor(t, i)
		req := dynamicpb.NewMessage(md)
		req.Set(md.Fields().ByNumber(1), protoreflect.ValueOfString("hello"))
		if err := ch.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
			t.Fatal(err)
		}
	}
	call(-1)
	before := heapInUse()
	for i := range n {
		call(i)
	}
	after := heapInUse()
	grown := int64(after) - int64(before)
	t.Logf("heap grew by %d bytes over %d calls (%d a call)", grown, n, grown/n)
	if grown > 1<<20 {
		t.Errorf("heap grew by %d KiB over %d calls, each of whose descriptors the client dropped (%d bytes a call)", grown>>10, n, grown/n)
	}
}
