package vtzoo_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/vtzoo"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const method = "/vtzoo.Echo/Tree"

// echoDesc is a service whose one method answers with its request, a
// Tree, telling saw what it got.
func echoDesc(saw chan<- string) (*grpc.ServiceDesc, any) {
	return &grpc.ServiceDesc{
		ServiceName: "vtzoo.Echo",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Tree", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := &vtzoo.Tree{}
			if err := dec(in); err != nil {
				return nil, err
			}
			saw <- wireOf(in)
			return in, nil
		}}},
	}, struct{}{}
}

func wireOf(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return fmt.Sprintf("%x unknown=%d %v", b, len(m.ProtoReflect().GetUnknown()), err)
}

func call(cc grpc.ClientConnInterface, saw <-chan string, req *vtzoo.Tree) string {
	reply := &vtzoo.Tree{}
	err := cc.Invoke(context.Background(), method, req, reply)
	got := ""
	select {
	case s := <-saw:
		got = "handler " + s + " | "
	default:
	}
	if err != nil {
		return got + fmt.Sprint("code=", status.Code(err))
	}
	leaf := "-"
	if reply.Leaf != nil {
		leaf = fmt.Sprint(len(reply.Leaf.ProtoReflect().GetUnknown()), reply.Leaf.S, " bytes nil ", reply.Leaf.B == nil)
	}
	for _, l := range reply.Leaves {
		leaf += fmt.Sprint(" listed ", l != nil)
	}
	for k, l := range reply.ByName {
		leaf += fmt.Sprint(" mapped ", k, l != nil)
	}
	return got + "reply " + wireOf(reply) + " leaf " + leaf
}

// TestVTProtoAgreesWithGRPC sends messages with vtprotobuf's fast clone
// through inproc in every mode and through grpc-go over bufconn, at the
// values a copy can get wrong: the handler and the client see the same.
func TestVTProtoAgreesWithGRPC(t *testing.T) {
	negZero := math.Copysign(0, -1)
	known := protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "from unknown")
	withUnknown := func(l *vtzoo.Leaf, b []byte) *vtzoo.Leaf {
		l.ProtoReflect().SetUnknown(b)
		return l
	}
	cases := map[string]func() *vtzoo.Tree{
		"negative-zero": func() *vtzoo.Tree {
			return &vtzoo.Tree{D: negZero, Leaf: &vtzoo.Leaf{D: negZero, F: float32(negZero)}, Leaves: []*vtzoo.Leaf{{D: negZero}}, ByName: map[string]*vtzoo.Leaf{"a": {D: negZero}}}
		},
		"utf8":                     func() *vtzoo.Tree { return &vtzoo.Tree{S: "\xff"} },
		"utf8-nested":              func() *vtzoo.Tree { return &vtzoo.Tree{Leaves: []*vtzoo.Leaf{{S: "\xff"}}} },
		"unknown-known-number":     func() *vtzoo.Tree { return &vtzoo.Tree{Leaf: withUnknown(&vtzoo.Leaf{}, known)} },
		"unknown-malformed-nested": func() *vtzoo.Tree { return &vtzoo.Tree{Leaf: withUnknown(&vtzoo.Leaf{}, []byte{0xff})} },
		"nil-list-element":         func() *vtzoo.Tree { return &vtzoo.Tree{Leaves: []*vtzoo.Leaf{{}, nil}} },
		"nil-map-value":            func() *vtzoo.Tree { return &vtzoo.Tree{ByName: map[string]*vtzoo.Leaf{"a": nil}} },
	}
	saw := make(chan string, 1)
	desc, impl := echoDesc(saw)
	cc := servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { r.RegisterService(desc, impl) }, nil)
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			want := call(cc, saw, msg())
			for _, copy := range []inproc.CopyMode{inproc.Clone, inproc.Share} {
				for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
					ch := inproc.New(inproc.WithCopy(copy), inproc.WithExecution(exec))
					ch.RegisterService(desc, impl)
					if got := call(ch, saw, msg()); got != want {
						t.Errorf("copy=%v exec=%v:\ninproc  %s\ngrpc-go %s", copy, exec, got, want)
					}
					ch.Stop()
				}
			}
		})
	}
}

// TestVTProtoEmptyBytes: a Tree, which has a map the plans do not copy,
// is copied by its CloneVT, which keeps an empty bytes field empty but not
// nil, where a socket delivers nil, as the inproc docs say; its length is
// 0 either way and proto.Equal holds.
func TestVTProtoEmptyBytes(t *testing.T) {
	saw := make(chan string, 1)
	desc, impl := echoDesc(saw)
	for _, copy := range []inproc.CopyMode{inproc.Clone, inproc.Share} {
		ch := inproc.New(inproc.WithCopy(copy))
		ch.RegisterService(desc, impl)
		req := &vtzoo.Tree{Leaf: &vtzoo.Leaf{B: []byte{}}}
		reply := &vtzoo.Tree{}
		if err := ch.Invoke(context.Background(), method, req, reply); err != nil {
			t.Fatal(err)
		}
		<-saw
		if reply.Leaf.B == nil || len(reply.Leaf.B) != 0 || !proto.Equal(reply, req) {
			t.Errorf("copy=%v: bytes nil %v, len %d, equal %v; want empty and not nil, as CloneVT copies it", copy, reply.Leaf.B == nil, len(reply.Leaf.B), proto.Equal(reply, req))
		}
		ch.Stop()
	}
}
