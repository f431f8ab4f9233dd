package bench

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// listServer is the ListStrings server of workload W1. Its responses are
// built before the timer starts, so a List call measures only sending.
type listServer struct {
	listv1.UnimplementedListStringsServer
	resps []*listv1.ListResponse
	// shape is what newListServer made it of, for a server process to
	// make the same (see serveChild).
	shape listShape
}

// listShape is n strings of size bytes, perMsg to a message.
type listShape struct {
	N, Size, PerMsg int
}

// newListServer returns a server whose List sends n distinct strings of
// size bytes, perMsg strings per message (the last may hold fewer).
func newListServer(n, size, perMsg int) *listServer {
	all := make([]string, n)
	for i := range all {
		// A distinct string each, padded to size, so no layer can get away
		// with sending one string many times.
		s := strconv.Itoa(i)
		all[i] = s + strings.Repeat("x", max(size-len(s), 0))
	}
	s := &listServer{shape: listShape{n, size, perMsg}}
	for chunk := range slices.Chunk(all, perMsg) {
		s.resps = append(s.resps, &listv1.ListResponse{Strings: chunk})
	}
	return s
}

// List sends the prebuilt responses.
func (s *listServer) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	for _, r := range s.resps {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	return nil
}

// listStringsCase is W1: one op is one List call that the client drains
// with the generated Recv until io.EOF, made by one of Config.Callers
// callers.
func listStringsCase(cfg Config, respSize int, im impl) func(b *testing.B) error {
	return func(b *testing.B) error {
		srv := newListServer(cfg.Strings, cfg.StringSize, respSize)
		cl, ctx, err := setUp(b, im, srv)
		if err != nil {
			return err
		}
		req := &listv1.ListRequest{}
		call := func() (int, error) { return drainList(ctx, cl.list, req) }
		if cl.pushList != nil {
			call = func() (int, error) { return pushList(ctx, cl.pushList, req) }
		}
		return timed(b, counting(cfg.Callers, cfg.Strings, "strings", call))
	}
}

// drainList makes one List call and counts the strings it receives.
func drainList(ctx context.Context, c listv1.ListStringsClient, req *listv1.ListRequest) (int, error) {
	stream, err := c.List(ctx, req)
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
		n += len(resp.GetStrings())
	}
}

// pushList runs one direct List call and counts the strings it sends.
func pushList(ctx context.Context, list func(context.Context, *listv1.ListRequest, func(*listv1.ListResponse) error) error, req *listv1.ListRequest) (int, error) {
	n := 0
	err := list(ctx, req, func(resp *listv1.ListResponse) error {
		n += len(resp.GetStrings())
		return nil
	})
	return n, err
}
