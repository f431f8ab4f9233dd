package fanout_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/fanout"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// joinStrings merges a run of equal responses into one holding every
// response's strings.
func joinStrings(kept, next *listv1.ListResponse) *listv1.ListResponse {
	return &listv1.ListResponse{Strings: append(slices.Clone(kept.Strings), next.Strings...)}
}

func TestDedupMerge(t *testing.T) {
	a := &lister{strings: []string{"a", "b", "c"}}
	b := &lister{strings: []string{"b", "c"}}
	c := &lister{strings: []string{"c", "d"}}
	p, err := fanout.New(open, []fanout.Backend{{Name: "a", Conn: channel(t, a)}, {Name: "b", Conn: channel(t, b)}, {Name: "c", Conn: channel(t, c)}},
		fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, joinStrings))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for resp, err := range p.Stream(t.Context(), &listv1.ListRequest{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(resp.Strings, ""))
	}
	if want := []string{"a", "bb", "ccc", "d"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want each run folded into one: %q", got, want)
	}
}

// nilOnB merges runs as joinStrings does, but folds the run of "b" into
// nil, and fails t if it is called with a nil response.
func nilOnB(t *testing.T) func(kept, next *listv1.ListResponse) *listv1.ListResponse {
	return func(kept, next *listv1.ListResponse) *listv1.ListResponse {
		if kept == nil || next == nil {
			t.Errorf("merge(%v, %v): called with nil", kept, next)
			return nil
		}
		if kept.Strings[0] == "b" {
			return nil
		}
		return joinStrings(kept, next)
	}
}

// TestDedupMergeReturnsNil: a merge that folds a run into nothing is the
// program's mistake, which the caller learns as an Internal error ending
// the stream, under Warn as under Abort: neither a nil response nor a run
// dropped without a word.
func TestDedupMergeReturnsNil(t *testing.T) {
	for _, policy := range []fanout.PartialResponse{fanout.Warn, fanout.Abort} {
		t.Run("policy="+policy.String(), func(t *testing.T) {
			x := &lister{strings: []string{"a", "b", "c"}}
			y := &lister{strings: []string{"a", "b", "c"}}
			p, err := fanout.New(open, []fanout.Backend{{Name: "x", Conn: channel(t, x)}, {Name: "y", Conn: channel(t, y)}},
				fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, nilOnB(t)), fanout.WithPartialResponse(policy))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var errs []error
			for resp, err := range p.Stream(t.Context(), &listv1.ListRequest{}) {
				switch {
				case err != nil:
					errs = append(errs, err)
				case resp == nil:
					t.Fatal("the proxy yielded (nil, nil)")
				case errs != nil:
					t.Errorf("response %q after the error", resp.Strings)
				default:
					got = append(got, strings.Join(resp.Strings, ""))
				}
			}
			if !slices.Equal(got, []string{"aa"}) {
				t.Errorf("responses %q, want the run before b's", got)
			}
			if len(errs) != 1 || status.Code(errs[0]) != codes.Internal || !strings.Contains(errs[0].Error(), "WithDedup merge function returned nil") {
				t.Errorf("errors %v, want one Internal naming the WithDedup merge function", errs)
			}
		})
	}
}

// relay is a ListStrings server that answers with what its proxy gets.
type relay struct {
	listv1.UnimplementedListStringsServer
	p *fanout.Proxy[listv1.ListRequest, listv1.ListResponse]
}

func (r relay) List(req *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	for resp, err := range r.p.Stream(s.Context(), req) {
		if err != nil {
			return err
		}
		if err := s.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// TestDedupMergeReturnsNilInAHandler: a proxy serving a call names the
// call's method in the error, which reaches the proxy's client.
func TestDedupMergeReturnsNilInAHandler(t *testing.T) {
	x := &lister{strings: []string{"b"}}
	y := &lister{strings: []string{"b"}}
	p, err := fanout.New(open, []fanout.Backend{{Name: "x", Conn: channel(t, x)}, {Name: "y", Conn: channel(t, y)}},
		fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, nilOnB(t)))
	if err != nil {
		t.Fatal(err)
	}
	front := inproc.New()
	t.Cleanup(front.Stop)
	listv1.RegisterListStringsServer(front, relay{p: p})
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	stream, err := listv1.NewListStringsClient(front).List(ctx, &listv1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "method "+listv1.ListStrings_List_FullMethodName) {
		t.Errorf("Recv: %v, %v; want Internal naming method %s", resp, err, listv1.ListStrings_List_FullMethodName)
	}
}

// TestUnaryDedupMergeReturnsNil: Gather returns the Internal error and no
// responses, not those before it, since the stream ended short under Warn
// too.
func TestUnaryDedupMergeReturnsNil(t *testing.T) {
	byText := func(a, b *echov1.EchoResponse) int { return strings.Compare(a.Text, b.Text) }
	sameInitial := func(a, b *echov1.EchoResponse) bool { return a.Text[0] == b.Text[0] }
	none := func(kept, next *echov1.EchoResponse) *echov1.EchoResponse { return nil }
	p, err := fanout.NewUnary(get, []fanout.Backend{
		echoBackend(t, "a", &echoReplica{name: "a"}),
		echoBackend(t, "b1", &echoReplica{name: "b1"}),
		echoBackend(t, "b2", &echoReplica{name: "b2"}),
	}, fanout.WithSortedMerge(byText), fanout.WithDedup(sameInitial, none))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	resps, err := p.Gather(ctx, &echov1.EchoRequest{})
	if resps != nil || status.Code(err) != codes.Internal {
		t.Errorf("Gather: %v, %v; want no responses and Internal", resps, err)
	}
}
