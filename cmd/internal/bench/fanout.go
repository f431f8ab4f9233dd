package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// fanOutBackends are the numbers of backends FanOut compares: one, where
// the proxy's cost over ListStrings respSize=10 shows alone, and several,
// where the merge's shows too.
var fanOutBackends = []int{1, 4}

// fanOutRespSize is the strings per message of FanOut: W1's middle size,
// so that FanOut backends=1 lines up with ListStrings respSize=10.
const fanOutRespSize = 10

// fanOutCase is FanOut: one op is one Stream of a fanout.Proxy over backends
// servers, each reached the impl's way, drained until it ends,
// made by one of Config.Callers callers. The Config.Strings strings are sorted
// and dealt out a message at a time, so that the merge takes from every
// backend in turn, and the proxy merges them back in order
// (fanout.WithSortedMerge); an op moves what one ListStrings call does.
func fanOutCase(cfg Config, backends int, im impl) func(b *testing.B) error {
	return func(b *testing.B) error {
		if im.serve == nil {
			return fmt.Errorf("%s: %s", im.name, noConn)
		}
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel) // last: after the servers stopped, as setUp's
		bs := make([]fanout.Backend, backends)
		for i, srv := range sortedListServers(cfg.Strings, cfg.StringSize, fanOutRespSize, backends) {
			cc, err := im.serve(b, servers{list: srv, echo: echo.Server{}})
			if err != nil {
				return fmt.Errorf("%s: %w", im.name, err)
			}
			bs[i] = fanout.Backend{Name: fmt.Sprint("backend-", i), Conn: cc}
		}
		p, err := fanout.New(openList, bs, fanout.WithSortedMerge(byFirstString))
		if err != nil {
			return err
		}
		req := &listv1.ListRequest{}
		return timed(b, counting(cfg.Callers, cfg.Strings, "strings", func() (int, error) {
			n := 0
			for resp, err := range p.Stream(ctx, req) {
				if err != nil {
					return n, err
				}
				n += len(resp.GetStrings())
			}
			return n, nil
		}))
	}
}

// sortedListServers returns backends servers that between them send n
// distinct strings of size bytes, perMsg per message, in order: message j
// of the whole goes to server j%backends. The strings are zero-padded
// numbers, so that they sort as they are numbered.
func sortedListServers(n, size, perMsg, backends int) []*listServer {
	width := len(fmt.Sprint(max(n-1, 0)))
	all := make([]string, n)
	for i := range all {
		s := fmt.Sprintf("%0*d", width, i)
		all[i] = s + strings.Repeat("x", max(size-len(s), 0))
	}
	srvs := make([]*listServer, backends)
	for i := range srvs {
		srvs[i] = &listServer{}
	}
	j := 0
	for chunk := range slices.Chunk(all, perMsg) {
		srv := srvs[j%backends]
		srv.resps = append(srv.resps, &listv1.ListResponse{Strings: chunk})
		j++
	}
	return srvs
}

// openList is the call FanOut's proxy fans out: List, with the generated
// client.
func openList(ctx context.Context, cc grpc.ClientConnInterface, req *listv1.ListRequest) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
	return listv1.NewListStringsClient(cc).List(ctx, req)
}

// byFirstString orders FanOut's messages, which each hold a sorted run of
// strings, by their first.
func byFirstString(a, b *listv1.ListResponse) int {
	return strings.Compare(a.GetStrings()[0], b.GetStrings()[0])
}
