package inproc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// listOfSize returns a ListResponse, of a type the size plans measure,
// whose encoding is exactly n bytes: a list of strings and unknown
// fields.
func listOfSize(t *testing.T, n int) *listv1.ListResponse {
	t.Helper()
	m := &listv1.ListResponse{Strings: []string{strings.Repeat("s", 1000), "é"}}
	rest := n - proto.Size(m)
	// An unknown bytes field of tag 99 (2 bytes) and a length prefix.
	for body := rest - 2 - 1; body > 0; body-- {
		if 2+protowire.SizeBytes(body) == rest {
			m.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), make([]byte, body)))
			break
		}
	}
	if proto.Size(m) != n {
		t.Fatalf("made %d bytes, want %d", proto.Size(m), n)
	}
	return m
}

// TestLimitsOnPlannedSizes: responses and requests measured by
// the size plans (repeated strings and unknown fields) right at the 4 MiB
// default receive limit, each call after one that set the kept plan, get
// the codes grpc-go gives: OK at the limit, ResourceExhausted one byte
// over, both ways.
func TestLimitsOnPlannedSizes(t *testing.T) {
	const limit = 4 << 20
	svc := func() *anySvc {
		return &anySvc{
			newReq: func() proto.Message { return &listv1.ListResponse{} },
			resp: func(req proto.Message) (proto.Message, error) {
				l := req.(*listv1.ListResponse)
				if len(l.Strings) == 0 {
					return nil, status.Error(codes.InvalidArgument, "empty")
				}
				if strings.HasPrefix(l.Strings[0], "small") {
					return &listv1.ListResponse{Strings: []string{"small"}}, nil
				}
				return listOfSize(t, limit+len(l.Strings)-2), nil // the request's list length says how far over
			},
		}
	}
	run := func(cc grpc.ClientConnInterface) []string {
		var out []string
		for _, req := range []*listv1.ListResponse{
			{Strings: []string{"small"}},
			listOfSize(t, limit),
			listOfSize(t, limit+1),
			{Strings: []string{"big", "x"}},        // response at the limit
			{Strings: []string{"big", "x", "y"}},   // one over
			{Strings: []string{"small", "x", "y"}}, // the plan kept is the small one's
			{Strings: []string{"big", "x", "y"}},
		} {
			reply := &listv1.ListResponse{}
			err := cc.Invoke(context.Background(), anyUnary, req, reply)
			out = append(out, fmt.Sprintf("%v/%d", status.Code(err), proto.Size(reply)))
		}
		return out
	}
	want := run(anyReference(t, svc()))
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc())
		if got := run(ch); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("inproc %v\ngrpc-go %v", got, want)
		}
	})
}
