package fanout_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanout"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// echoReplica answers Get with its name after wait returns nil.
type echoReplica struct {
	echov1.UnimplementedEchoServer
	name string
	wait func(ctx context.Context) error
}

func (e *echoReplica) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	if e.wait != nil {
		if err := e.wait(ctx); err != nil {
			return nil, err
		}
	}
	return &echov1.EchoResponse{Text: e.name}, nil
}

func get(ctx context.Context, cc grpc.ClientConnInterface, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return echov1.NewEchoClient(cc).Get(ctx, r)
}

func echoBackend(t *testing.T, shard string, e *echoReplica) fanout.Backend {
	ch := inproc.New()
	t.Cleanup(ch.Stop)
	echov1.RegisterEchoServer(ch, e)
	return fanout.Backend{Name: e.name, Shard: shard, Conn: ch}
}

func texts(resps []*echov1.EchoResponse) []string {
	var out []string
	for _, r := range resps {
		out = append(out, r.Text)
	}
	return out
}

func TestUnaryGathersOnePerShard(t *testing.T) {
	down := func(context.Context) error { return status.Error(codes.Unavailable, "down") }
	backends := []fanout.Backend{
		echoBackend(t, "a", &echoReplica{name: "a-1"}),
		echoBackend(t, "a", &echoReplica{name: "a-2"}),
		echoBackend(t, "b", &echoReplica{name: "b-1"}),
		echoBackend(t, "c", &echoReplica{name: "c-1", wait: down}),
	}
	byText := fanout.WithSortedMerge(func(x, y *echov1.EchoResponse) int { return strings.Compare(x.Text, y.Text) })
	t.Run("partial=warn", func(t *testing.T) {
		p, err := fanout.NewUnary(get, backends, byText)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range [][]string{{"a-1", "b-1"}, {"a-2", "b-1"}} {
			resps, err := p.Gather(t.Context(), &echov1.EchoRequest{})
			var be *fanout.BackendError
			if !errors.As(err, &be) || be.Backend != "c-1" || status.Code(be.Err) != codes.Unavailable {
				t.Errorf("error %v, want c-1's Unavailable", err)
			}
			if got := texts(resps); !slices.Equal(got, want) {
				t.Errorf("responses %q, want %q: one replica of each healthy shard, in order", got, want)
			}
		}
	})
	t.Run("partial=abort", func(t *testing.T) {
		p, err := fanout.NewUnary(get, backends, fanout.WithPartialResponse(fanout.Abort))
		if err != nil {
			t.Fatal(err)
		}
		resps, err := p.Gather(t.Context(), &echov1.EchoRequest{})
		var be *fanout.BackendError
		if resps != nil || !errors.As(err, &be) || be.Backend != "c-1" {
			t.Errorf("Gather: %q, %v; want no responses and c-1's error", texts(resps), err)
		}
	})
}

func TestUnaryHedged(t *testing.T) {
	slow := &echoReplica{name: "slow", wait: blocks}
	p, err := fanout.NewUnary(get, []fanout.Backend{
		echoBackend(t, "s", slow),
		echoBackend(t, "s", &echoReplica{name: "fast"}),
	}, fanout.WithHedging(fanout.Hedging{Delay: 5 * time.Millisecond, Budget: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		resps, err := p.Gather(t.Context(), &echov1.EchoRequest{})
		if got := texts(resps); !slices.Equal(got, []string{"fast"}) || err != nil {
			t.Fatalf("Gather: %q, %v; want fast's answer alone", got, err)
		}
	}
	if s := stats(p, "slow"); s.Calls != 1 || s.Cancelled != 1 {
		t.Errorf("slow: %+v; want its call cancelled by the hedge", s)
	}
}

func TestUnaryContextEnds(t *testing.T) {
	p, err := fanout.NewUnary(get, []fanout.Backend{echoBackend(t, "", &echoReplica{name: "a", wait: blocks})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	resps, err := p.Gather(ctx, &echov1.EchoRequest{})
	if resps != nil || status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Gather: %q, %v; want DeadlineExceeded", texts(resps), err)
	}
}

func TestNewUnaryRefuses(t *testing.T) {
	backends := []fanout.Backend{echoBackend(t, "", &echoReplica{name: "a"})}
	if _, err := fanout.NewUnary(get, backends, fanout.WithIdleTimeout(time.Second)); err == nil || !strings.Contains(err.Error(), "WithIdleTimeout") {
		t.Errorf("NewUnary with an idle timeout: %v, want an error naming it", err)
	}
	if _, err := fanout.NewUnary[echov1.EchoRequest, echov1.EchoResponse](nil, backends); err == nil {
		t.Error("NewUnary without a UnaryFunc: no error")
	}
	if _, err := fanout.NewUnary(get, nil); err == nil {
		t.Error("NewUnary without backends: no error")
	}
}
