package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/apipb"
	"google.golang.org/protobuf/types/known/sourcecontextpb"
	"google.golang.org/protobuf/types/known/typepb"
)

// oracleSized is a message of some shape and what its receivers
// allocate.
type oracleSized struct {
	name string
	msg  func() any
	recv func() any
	size int
}

func oracleSizedMessages() []oracleSized {
	typ := func() any {
		m := &typepb.Type{Name: strings.Repeat("n", 300), SourceContext: &sourcecontextpb.SourceContext{FileName: "é"}, Syntax: typepb.Syntax(-1)}
		for i := range 40 {
			m.Fields = append(m.Fields, &typepb.Field{Kind: typepb.Field_Kind(-i), Number: int32(-i), Name: strings.Repeat("f", i*3),
				Options: []*typepb.Option{{Name: "o", Value: &anypb.Any{TypeUrl: "u", Value: make([]byte, 200+i)}}, {}}})
		}
		m.Oneofs = []string{"a", "", strings.Repeat("b", 130)}
		return m
	}
	cases := []oracleSized{
		{name: "typepb", msg: typ, recv: func() any { return &typepb.Type{} }},
		{name: "apipb", msg: func() any {
			m := &apipb.Api{Name: "api", Version: strings.Repeat("v", 127)}
			for i := range 30 {
				m.Methods = append(m.Methods, &apipb.Method{Name: strings.Repeat("m", 128+i), RequestTypeUrl: "r", ResponseStreaming: true, Syntax: typepb.Syntax(-i)})
				m.Mixins = append(m.Mixins, &apipb.Mixin{Name: "x"})
			}
			return m
		}, recv: func() any { return &apipb.Api{} }},
		{name: "status", msg: func() any {
			m := &statuspb.Status{Code: -1, Message: strings.Repeat("s", 1000)}
			for i := range 50 {
				m.Details = append(m.Details, &anypb.Any{TypeUrl: strings.Repeat("t", i), Value: make([]byte, i*7)})
			}
			return m
		}, recv: func() any { return &statuspb.Status{} }},
		{name: "open3", msg: func() any {
			m := &open3.Tree{S: strings.Repeat("s", 500), Leaf: &open3.Leaf{B: make([]byte, 300)}, ByName: map[string]*open3.Leaf{"k": {S: "v"}}, Ds: make([]float64, 40)}
			for i := range 20 {
				m.Leaves = append(m.Leaves, &open3.Leaf{D: float64(i), S: strings.Repeat("x", 10*i)})
			}
			return m
		}, recv: func() any { return &open3.Tree{} }},
		{name: "proto2", msg: func() any {
			m := &proto2.Record{Name: proto.String(strings.Repeat("r", 400)), Grp: &proto2.Record_Grp{Must: proto.String("m")}}
			for i := range 10 {
				m.Kids = append(m.Kids, &proto2.Record{Name: proto.String(strings.Repeat("k", 20*i))})
			}
			proto.SetExtension(m, proto2.E_Note, strings.Repeat("e", 150))
			return m
		}, recv: func() any { return &proto2.Record{} }},
		{name: "dynamic", msg: func() any {
			b, _ := proto.Marshal(typ().(proto.Message))
			m := dynamicpb.NewMessage((&typepb.Type{}).ProtoReflect().Descriptor())
			if err := proto.Unmarshal(b, m); err != nil {
				panic(err)
			}
			return m
		}, recv: func() any { return &typepb.Type{} }},
		{name: "typepb-unknown", msg: func() any {
			m := typ().(*typepb.Type)
			m.ProtoReflect().SetUnknown([]byte{0xf8, 0x0f, 0x01})
			m.Fields[3].ProtoReflect().SetUnknown([]byte{0xf8, 0x0f, 0x02})
			return m
		}, recv: func() any { return &typepb.Type{} }},
		{name: "opaque", msg: func() any {
			var kids []*opaque.Node
			for i := range 30 {
				kids = append(kids, opaque.Node_builder{Label: proto.String(strings.Repeat("l", i*9)), Data: make([]byte, i)}.Build())
			}
			return opaque.Holder_builder{Kids: kids, S: proto.String("s"), Names: []string{"a", "b"}}.Build()
		}, recv: func() any { return &opaque.Holder{} }},
		{name: "self-coding", msg: func() any { return &selfCoded{Text: strings.Repeat("t", 3000), Data: make([]byte, 4000)} },
			recv: func() any { return &selfCoded{} }},
	}
	for i := range cases {
		switch m := cases[i].msg().(type) {
		case proto.Message:
			cases[i].size = proto.Size(m)
		case protoadapt.MessageV1:
			cases[i].size = proto.Size(protoadapt.MessageV2Of(m))
		}
	}
	return cases
}

// oracleLimitSvc echoes whatever it gets, on both methods, receiving
// into what recv makes.
func oracleLimitSvc(recv func() any) *oracleRawSvc {
	return &oracleRawSvc{newIn: recv, out: func(in any) any { return in }, saw: make(chan string, 64)}
}

// oracleLimitRun sends msg by the unary method and by the bidi one, and
// tells the codes each ends with.
func oracleLimitRun(cc grpc.ClientConnInterface, c oracleSized, opts ...grpc.CallOption) string {
	reply := c.recv()
	unary := cc.Invoke(context.Background(), "/oracle.Raw/Unary", c.msg(), reply, opts...)
	stream := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		s, err := cc.NewStream(ctx, anyBidiDesc, "/oracle.Raw/Bidi", opts...)
		if err != nil {
			return err
		}
		if err := s.SendMsg(c.msg()); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("send: %w", err)
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		for {
			if err := s.RecvMsg(c.recv()); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}()
	return fmt.Sprintf("unary %v, stream %v", status.Code(unary), status.Code(stream))
}

// TestHandoverLimitsAtTheEdge: messages of every strategy (flat
// well-known types with nested messages and lists of them, open and
// proto2 messages, a dynamic one, a self-coding one) exactly at each of
// the four limits and one byte over, both ways, unary and streaming:
// the codes must be grpc-go's.
func TestHandoverLimitsAtTheEdge(t *testing.T) {
	for _, c := range oracleSizedMessages() {
		t.Run(c.name, func(t *testing.T) {
			for _, over := range []int{0, 1} {
				n := c.size - over
				limits := []struct {
					name  string
					sopt  grpc.ServerOption
					iopt  inproc.Option
					copts []grpc.CallOption
				}{
					{"client-recv", nil, nil, []grpc.CallOption{grpc.MaxCallRecvMsgSize(n)}},
					{"client-send", nil, nil, []grpc.CallOption{grpc.MaxCallSendMsgSize(n)}},
					{"server-recv", grpc.MaxRecvMsgSize(n), inproc.WithServerMaxRecvMsgSize(n), nil},
					{"server-send", grpc.MaxSendMsgSize(n), inproc.WithServerMaxSendMsgSize(n), nil},
				}
				for _, l := range limits {
					t.Run(fmt.Sprintf("%s/%d-of-%d", l.name, n, c.size), func(t *testing.T) {
						var sopts []grpc.ServerOption
						var iopts []inproc.Option
						if l.sopt != nil {
							sopts, iopts = []grpc.ServerOption{l.sopt}, []inproc.Option{l.iopt}
						}
						ref := realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, oracleLimitSvc(c.recv)) }, sopts, nil)
						want := oracleLimitRun(ref, c, l.copts...)
						forEachMode(t, func(t *testing.T, m testMode) {
							ch := newChannel(t, m, iopts...)
							ch.RegisterService(oracleRawDesc, oracleLimitSvc(c.recv))
							// Twice: the second finds the plan the first kept.
							for range 2 {
								if got := oracleLimitRun(ch, c, l.copts...); got != want {
									t.Errorf("inproc %s; grpc-go %s", got, want)
								}
							}
						})
					})
				}
			}
		})
	}
}
