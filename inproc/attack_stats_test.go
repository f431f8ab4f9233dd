package inproc_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// payloadRecorder records the lengths of every payload event.
type payloadRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *payloadRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (r *payloadRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (r *payloadRecorder) HandleConn(context.Context, stats.ConnStats) {}
func (r *payloadRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	var e string
	switch s := s.(type) {
	case *stats.InPayload:
		e = fmt.Sprintf("client=%v in length=%d compressed=%d wire=%d", s.Client, s.Length, s.CompressedLength, s.WireLength)
	case *stats.OutPayload:
		e = fmt.Sprintf("client=%v out length=%d compressed=%d wire=%d", s.Client, s.Length, s.CompressedLength, s.WireLength)
	default:
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *payloadRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := slices.Clone(r.events)
	slices.Sort(e)
	r.events = nil
	return e
}

// TestAttackStatsCompressedLength: grpc-go's payload events carry
// CompressedLength (equal to Length without compression); grpc-go's own
// OpenTelemetry plugin (google.golang.org/grpc/stats/opentelemetry)
// records grpc.*.sent/rcvd_total_compressed_message_size from it. inproc
// leaves it 0.
func TestAttackStatsCompressedLength(t *testing.T) {
	ref := &payloadRecorder{}
	cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, &funcEcho{}) },
		[]grpc.ServerOption{grpc.StatsHandler(ref)}, []grpc.DialOption{grpc.WithStatsHandler(ref)})
	call := func(c echov1.EchoClient) {
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	call(echov1.NewEchoClient(cc))
	want := ref.take()
	forEachMode(t, func(t *testing.T, m testMode) {
		rec := &payloadRecorder{}
		c, _ := newEcho(t, m, &funcEcho{}, inproc.WithServerStatsHandler(rec), inproc.WithClientStatsHandler(rec))
		call(c)
		if got := rec.take(); !slices.Equal(got, want) {
			t.Errorf("payload events:\n got %q\nwant %q (grpc-go)", got, want)
		}
	})
}
