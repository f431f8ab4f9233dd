package storepb_test

// attack5: Share copy mode with gogoproto messages (own Marshal,
// Unmarshal, Size). The receiver's safe changes (assign a field, a new
// oneof wrapper, append to a list, a merging Unmarshal) must leave the
// sender's message untouched and race-free, as over grpc-go (the oracle).

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/bench/storepb"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
)

func a5Resp() *storepb.SeriesResponse {
	return &storepb.SeriesResponse{Result: &storepb.SeriesResponse_Series{Series: &storepb.Series{
		Labels: []storepb.Label{{Name: "__name__", Value: "up"}, {Name: "i", Value: "1"}},
		Chunks: []storepb.AggrChunk{{MinTime: 1, MaxTime: 2, Raw: &storepb.Chunk{Data: []byte{1, 2}, Hash: 3}}},
	}}}
}

var a5GogoMutations = map[string]func(t *testing.T, r *storepb.SeriesResponse){
	"assign-oneof": func(t *testing.T, r *storepb.SeriesResponse) {
		r.Result = &storepb.SeriesResponse_Warning{Warning: "w"}
	},
	"assign-nil": func(t *testing.T, r *storepb.SeriesResponse) { r.Result = nil },
	"reset":      func(t *testing.T, r *storepb.SeriesResponse) { r.Reset() },
	"unmarshal-merge-warning": func(t *testing.T, r *storepb.SeriesResponse) {
		b, _ := (&storepb.SeriesResponse{Result: &storepb.SeriesResponse_Warning{Warning: "w"}}).Marshal()
		if err := r.Unmarshal(b); err != nil {
			t.Error(err)
		}
	},
}

type a5Store struct {
	storepb.UnimplementedStoreServer
	sent []*storepb.SeriesResponse
	stop chan struct{}
	done chan struct{}
}

func (s *a5Store) Series(_ *storepb.SeriesRequest, stream grpc.ServerStreamingServer[storepb.SeriesResponse]) error {
	for range 3 {
		s.sent = append(s.sent, a5Resp())
	}
	sent := s.sent
	go func() { // the sender reads what it sent
		defer close(s.done)
		for {
			for _, r := range sent {
				_, _ = r.Marshal()
			}
			select {
			case <-s.stop:
				return
			default:
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for _, r := range sent {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	return nil
}

func a5GogoRun(t *testing.T, cc func(storepb.StoreServer) grpc.ClientConnInterface, mut func(*testing.T, *storepb.SeriesResponse)) string {
	s := &a5Store{stop: make(chan struct{}), done: make(chan struct{})}
	c := storepb.NewStoreClient(cc(s))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := c.Series(ctx, &storepb.SeriesRequest{})
	if err != nil {
		return err.Error()
	}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			close(s.stop)
			<-s.done
			return err.Error()
		}
		mut(t, r)
	}
	time.Sleep(time.Millisecond)
	close(s.stop)
	<-s.done
	for _, r := range s.sent {
		if !reflect.DeepEqual(r, a5Resp()) {
			return fmt.Sprintf("sender's response changed: %v", r)
		}
	}
	return ""
}

func TestAttack5GogoShareSafeMutations(t *testing.T) {
	for name, mut := range a5GogoMutations {
		t.Run(name, func(t *testing.T) {
			want := a5GogoRun(t, func(s storepb.StoreServer) grpc.ClientConnInterface {
				return servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { storepb.RegisterStoreServer(r, s) }, nil)
			}, mut)
			if want != "" {
				t.Fatalf("oracle: %s", want)
			}
			for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
				got := a5GogoRun(t, func(s storepb.StoreServer) grpc.ClientConnInterface {
					ch := inproc.New(inproc.WithCopy(inproc.Share), inproc.WithExecution(exec))
					t.Cleanup(ch.Stop)
					storepb.RegisterStoreServer(ch, s)
					return ch
				}, mut)
				if got != want {
					t.Errorf("share/%v: grpc-go leaves the sender's message untouched; inproc: %s", exec, got)
				}
			}
		})
	}
}
