package storepb_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench/storepb"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// store answers a Series call with the responses resps makes.
type store struct {
	storepb.UnimplementedStoreServer
	resps func() []*storepb.SeriesResponse
}

func (s store) Series(_ *storepb.SeriesRequest, stream grpc.ServerStreamingServer[storepb.SeriesResponse]) error {
	for _, r := range s.resps() {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	return nil
}

// responses are Store API responses as Thanos sends them, with a warning
// that is not UTF-8 (Thanos's warnings and label values need not be): a
// socket carries it, since gogoproto's Marshal checks none.
func responses() []*storepb.SeriesResponse {
	var out []*storepb.SeriesResponse
	for i := range 20 {
		out = append(out, &storepb.SeriesResponse{Result: &storepb.SeriesResponse_Series{Series: &storepb.Series{
			Labels: []storepb.Label{{Name: "__name__", Value: "up"}, {Name: "i", Value: fmt.Sprint(i, "\xff")}},
			Chunks: []storepb.AggrChunk{{MinTime: int64(i), MaxTime: int64(i + 1), Raw: &storepb.Chunk{Data: []byte{byte(i), 0}, Hash: uint64(i)}}},
		}}})
	}
	return append(out, &storepb.SeriesResponse{Result: &storepb.SeriesResponse_Warning{Warning: "partial \xfe response"}})
}

// drain calls Series and returns each response received, encoded by its
// own Marshal, after changing it as a client may change what it owns.
func drain(t *testing.T, c storepb.StoreClient, grow func(*storepb.SeriesResponse)) []string {
	stream, err := c.Series(context.Background(), &storepb.SeriesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return got
		}
		if err != nil {
			return append(got, fmt.Sprint("code=", status.Code(err)))
		}
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%x", b))
		if s := r.GetSeries(); s != nil {
			s.Labels[0].Value = "changed by the client"
		}
		if grow != nil {
			grow(r)
		}
	}
}

// TestGogoprotoAgreesWithGRPC sends gogoproto-generated messages (their
// own Marshal, Unmarshal and Size, no ProtoReflect) through inproc in
// every mode and through grpc-go over bufconn: the client gets the same
// bytes, strings that are not UTF-8 included; and with Clone the client's
// changes do not reach the server's messages.
func TestGogoprotoAgreesWithGRPC(t *testing.T) {
	cc := servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { storepb.RegisterStoreServer(r, store{resps: responses}) }, nil)
	want := drain(t, storepb.NewStoreClient(cc), nil)
	if len(want) != 21 {
		t.Fatalf("grpc-go: %q", want)
	}
	for _, copy := range []inproc.CopyMode{inproc.Clone, inproc.Share} {
		for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
			t.Run(fmt.Sprintf("copy=%v/exec=%v", copy, exec), func(t *testing.T) {
				sent := responses()
				ch := inproc.New(inproc.WithCopy(copy), inproc.WithExecution(exec))
				defer ch.Stop()
				storepb.RegisterStoreServer(ch, store{resps: func() []*storepb.SeriesResponse { return sent }})
				got := drain(t, storepb.NewStoreClient(ch), nil)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("inproc %.300q\ngrpc-go %.300q", got, want)
				}
				if copy == inproc.Clone {
					for i, r := range sent[:20] {
						if v := r.GetSeries().Labels[0].Value; v != "up" {
							t.Fatalf("the client's change reached the server's message %d: %q", i, v)
						}
					}
				}
			})
		}
	}
}

// TestGogoprotoShareTopLevel: with Share, what a client does to the top
// level of a gogoproto message it received, with plain Go as gogoproto's
// users do (assign a oneof), does not reach the server's message.
// (gogoproto's own Unmarshal assigns new values the same way; the Series
// inside is a nested message, which Share shares.)
func TestGogoprotoShareTopLevel(t *testing.T) {
	sent := responses()
	before := make([]string, len(sent))
	for i, r := range sent {
		b, _ := r.Marshal()
		before[i] = fmt.Sprintf("%x", b)
	}
	ch := inproc.New(inproc.WithCopy(inproc.Share))
	defer ch.Stop()
	storepb.RegisterStoreServer(ch, store{resps: func() []*storepb.SeriesResponse { return sent }})
	drain(t, storepb.NewStoreClient(ch), func(r *storepb.SeriesResponse) {
		r.Result = &storepb.SeriesResponse_Warning{Warning: "replaced by the client"}
		if err := r.Unmarshal([]byte{0x12, 0x01, 'x'}); err != nil { // a warning, merged
			t.Error(err)
		}
	})
	for i, r := range sent {
		if i < 20 {
			r.GetSeries().Labels[0].Value = "up" // the nested change drain makes
		}
		b, _ := r.Marshal()
		if got := fmt.Sprintf("%x", b); got != before[i] {
			t.Errorf("the server's message %d changed: %s, was %s", i, got, before[i])
		}
	}
}
