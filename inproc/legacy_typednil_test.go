package inproc_test

import (
	"context"
	"fmt"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// legacyMsg is a message as old generators made them: no ProtoReflect,
// XXX_ fields, proto3 tags. protobuf-go (and so grpc-go's codec) derives
// its descriptor from the tags.
type legacyMsg struct {
	Text                 string   `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	Data                 []byte   `protobuf:"bytes,2,opt,name=data,proto3" json:"data,omitempty"`
	List                 []string `protobuf:"bytes,3,rep,name=list,proto3" json:"list,omitempty"`
	XXX_NoUnkeyedLiteral struct{} `json:"-"`
	XXX_unrecognized     []byte   `json:"-"`
	XXX_sizecache        int32    `json:"-"`
}

func (m *legacyMsg) Reset()         { *m = legacyMsg{} }
func (m *legacyMsg) String() string { return fmt.Sprintf("%q %q %q", m.Text, m.Data, m.List) }
func (*legacyMsg) ProtoMessage()    {}

var _ protoadapt.MessageV1 = (*legacyMsg)(nil)

// TestLegacyMessages sends messages of an old generated type
// (no ProtoReflect: protobuf wraps it, and every such type shares the
// wrapper's Go type) through a unary call both ways, alternating with a
// generated type on the same method so the kept plans switch, and
// compares with grpc-go: the values delivered, the refusal of invalid
// UTF-8, and, with Clone, that the sender's changes right after the call
// do not reach the handler's copy.
func TestLegacyMessages(t *testing.T) {
	newSvc := func(seen chan<- string) *anySvc {
		return &anySvc{
			newReq: func() proto.Message { return protoadapt.MessageV2Of(&legacyMsg{}) },
			resp: func(req proto.Message) (proto.Message, error) {
				in := protoadapt.MessageV1Of(req).(*legacyMsg)
				seen <- in.String()
				return protoadapt.MessageV2Of(&legacyMsg{Text: in.Text + "!", Data: in.Data, List: in.List}), nil
			},
		}
	}
	run := func(cc grpc.ClientConnInterface, seen <-chan string, scribble bool) []string {
		var out []string
		for i, req := range []any{
			&legacyMsg{Text: "a", Data: []byte("data"), List: []string{"x", "y"}},
			&echov1.EchoRequest{Text: "generated"},
			&legacyMsg{Text: "b", Data: []byte("more")},
			&legacyMsg{Text: "bad\xff"},
			&legacyMsg{Text: "c", List: []string{"ok", "bad\xff"}},
		} {
			reply := &legacyMsg{}
			err := cc.Invoke(context.Background(), anyUnary, req, reply)
			if l, ok := req.(*legacyMsg); ok && scribble {
				for j := range l.Data {
					l.Data[j] = 'X'
				}
				if len(l.List) > 0 {
					l.List[0] = "scribbled"
				}
			}
			got := ""
			if err == nil {
				got = <-seen
			}
			out = append(out, fmt.Sprintf("%d: %v | handler %s | reply %s", i, status.Code(err), got, reply))
		}
		return out
	}
	seen := make(chan string, 1)
	want := run(anyReference(t, newSvc(seen)), seen, false)
	if want[3][:len("3: Internal")] != "3: "+codes.Internal.String() {
		t.Fatalf("grpc-go: %q", want)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan string, 1)
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, newSvc(seen))
		var got []string
		if err := catch(func() error { got = run(ch, seen, !isShare(t, m)); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("inproc %q\ngrpc-go %q", got, want)
				break
			}
		}
	})
}

// TestTypedNilMessages: a typed nil request or response encodes as an
// empty message over a socket; inproc must deliver an empty message too,
// also right after a non-nil message of the same type set the kept plan.
func TestTypedNilMessages(t *testing.T) {
	svc := func() *funcEcho {
		return &funcEcho{get: func(_ context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if req.Text == "" {
				return nil, status.Error(codes.InvalidArgument, "empty") // over a socket a typed nil arrives empty
			}
			if req.Text == "nil" {
				return (*echov1.EchoResponse)(nil), nil
			}
			return &echov1.EchoResponse{Text: req.Text}, nil
		}}
	}
	run := func(c echov1.EchoClient) []string {
		var out []string
		for _, req := range []*echov1.EchoRequest{{Text: "x"}, nil, {Text: "nil"}, {Text: "y"}, {Text: "nil"}} {
			resp, err := c.Get(context.Background(), req)
			out = append(out, fmt.Sprintf("%v %q", status.Code(err), resp.GetText()))
		}
		return out
	}
	want := run(echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, svc()) }, nil, nil)))
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, svc())
		var got []string
		if err := catch(func() error { got = run(c); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("inproc %q, grpc-go %q", got, want)
		}
	})
}
