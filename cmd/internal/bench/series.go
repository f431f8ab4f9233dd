package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench/storepb"
	"github.com/localgrpc/localgrpc/echo"
	"google.golang.org/grpc"
)

// seriesShapes are the Series workload's streams: Thanos's Store API
// answering with 10,000 series of one sample each, and with 1,000 series
// of 120 samples (one full XOR chunk) each.
var seriesShapes = []struct{ series, samples int }{{10000, 1}, {1000, 120}}

// storeServer is the Series workload's Store server: its responses, one
// series each, are built before the timer starts, as ListStrings' are.
type storeServer struct {
	storepb.UnimplementedStoreServer
	resps []*storepb.SeriesResponse
}

// newStoreServer returns a server whose Series sends n series of samples
// samples each, labelled as a Prometheus series is.
func newStoreServer(n, samples int) *storeServer {
	s := &storeServer{}
	for i := range n {
		id := strconv.Itoa(i)
		labels := []storepb.Label{
			{Name: "__name__", Value: "http_requests_total"},
			{Name: "code", Value: "200"},
			{Name: "instance", Value: "10.0." + strconv.Itoa(i%256) + ".1:9090"},
			{Name: "job", Value: "api-server"},
			{Name: "series", Value: id},
		}
		// An XOR chunk takes about 1.4 bytes a sample after its header.
		data := make([]byte, 16+samples*14/10)
		for j := range data {
			data[j] = byte(i + j)
		}
		chunk := storepb.AggrChunk{MinTime: int64(i), MaxTime: int64(i + samples*15000), Raw: &storepb.Chunk{Type: storepb.Chunk_XOR, Data: data, Hash: uint64(i)}}
		s.resps = append(s.resps, &storepb.SeriesResponse{Result: &storepb.SeriesResponse_Series{Series: &storepb.Series{Labels: labels, Chunks: []storepb.AggrChunk{chunk}}}})
	}
	return s
}

// Series sends the prebuilt responses.
func (s *storeServer) Series(_ *storepb.SeriesRequest, stream grpc.ServerStreamingServer[storepb.SeriesResponse]) error {
	for _, r := range s.resps {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	return nil
}

// iterStore is Thanos's own in-process client (storepb.ServerAsClient): a
// StoreClient whose Series call runs the handler as an iter.Pull2
// coroutine and copies and checks nothing.
type iterStore struct{ srv storepb.StoreServer }

func (c iterStore) Series(ctx context.Context, in *storepb.SeriesRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[storepb.SeriesResponse], error) {
	return pull(ctx, func(s grpc.ServerStreamingServer[storepb.SeriesResponse]) error { return c.srv.Series(in, s) }), nil
}

// seriesCase is Series: one op is one Series call of series series of
// samples samples each, drained with the generated Recv, made by one of
// Config.Callers callers.
func seriesCase(cfg Config, series, samples int, im impl) func(b *testing.B) error {
	return func(b *testing.B) error {
		srv := newStoreServer(series, samples)
		var client storepb.StoreClient
		switch {
		case im.name == "iter":
			client = iterStore{srv}
		case im.serve != nil:
			cc, err := im.serve(b, servers{list: &listServer{}, echo: echo.Server{}, more: func(r grpc.ServiceRegistrar) {
				storepb.RegisterStoreServer(r, srv)
			}})
			if err != nil {
				return fmt.Errorf("%s: %w", im.name, err)
			}
			client = storepb.NewStoreClient(cc)
		default:
			return fmt.Errorf("%s: %s", im.name, noStore)
		}
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel)
		req := &storepb.SeriesRequest{MaxTime: 1 << 40}
		return timed(b, counting(cfg.Callers, series, "series", func() (int, error) { return drainSeries(ctx, client, req) }))
	}
}

// drainSeries makes one Series call and counts the series it receives.
func drainSeries(ctx context.Context, c storepb.StoreClient, req *storepb.SeriesRequest) (int, error) {
	stream, err := c.Series(ctx, req)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if resp.GetSeries() != nil {
			n++
		}
	}
}
