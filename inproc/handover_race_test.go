package inproc_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/typepb"
)

// oracleLegacy is a message of the first Go API: protobuf tags, no
// ProtoReflect and no Marshal of its own, so protobuf wraps it by
// reflection.
type oracleLegacy struct {
	Text                 string          `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	Data                 []byte          `protobuf:"bytes,2,opt,name=data,proto3" json:"data,omitempty"`
	Kid                  *oracleLegacy   `protobuf:"bytes,3,opt,name=kid,proto3" json:"kid,omitempty"`
	Kids                 []*oracleLegacy `protobuf:"bytes,4,rep,name=kids,proto3" json:"kids,omitempty"`
	Nums                 []int32         `protobuf:"varint,5,rep,packed,name=nums,proto3" json:"nums,omitempty"`
	XXX_NoUnkeyedLiteral struct{}        `json:"-"`
	XXX_unrecognized     []byte          `json:"-"`
	XXX_sizecache        int32           `json:"-"`
}

func (m *oracleLegacy) Reset()         { *m = oracleLegacy{} }
func (m *oracleLegacy) String() string { return fmt.Sprintf("%+v", *m) }
func (*oracleLegacy) ProtoMessage()    {}

// oracleStamped is a message a sender changes in place, through every
// nested path it has, after each SendMsg, and how to read the stamps
// back: a receiver must see every stamp of one message equal.
type oracleStamped struct {
	name  string
	msg   func() any
	recv  func() any
	stamp func(m any, i int)
	read  func(m any) []int
}

func oracleStampedMessages() []oracleStamped {
	b := func(i int) byte { return byte(i) }
	dynMD := (&open3.Tree{}).ProtoReflect().Descriptor()
	return []oracleStamped{
		{"typepb", func() any {
			return &typepb.Type{Fields: []*typepb.Field{{Options: []*typepb.Option{{Value: &anypb.Any{Value: []byte{0, 0}}}}}}, Oneofs: []string{"x"}}
		}, func() any { return &typepb.Type{} }, func(m any, i int) {
			t := m.(*typepb.Type)
			t.Name = fmt.Sprint(i)
			t.Fields[0].Number = int32(i)
			t.Fields[0].Options[0].Value.Value[1] = b(i)
			t.Oneofs[0] = fmt.Sprint(i)
		}, func(m any) []int {
			t := m.(*typepb.Type)
			var n, o int
			fmt.Sscan(t.Name, &n)
			fmt.Sscan(t.Oneofs[0], &o)
			return []int{n, int(t.Fields[0].Number), int(t.Fields[0].Options[0].Value.Value[1]), o}
		}},
		{"open3", func() any {
			return &open3.Tree{Leaf: &open3.Leaf{}, Leaves: []*open3.Leaf{{B: []byte{0}}}, ByName: map[string]*open3.Leaf{"k": {}},
				Ds: []float64{0}, OptD: proto.Float64(0), Choice: &open3.Tree_Od{}}
		}, func() any { return &open3.Tree{} }, func(m any, i int) {
			t := m.(*open3.Tree)
			t.Leaf.D = float64(i)
			t.Leaves[0].B[0] = b(i)
			t.ByName["k"].F = float32(i)
			t.Ds[0] = float64(i)
			*t.OptD = float64(i)
			t.Choice.(*open3.Tree_Od).Od = float64(i)
		}, func(m any) []int {
			t := m.(*open3.Tree)
			return []int{int(t.Leaf.D), int(t.Leaves[0].B[0]), int(t.ByName["k"].F), int(t.Ds[0]), int(t.GetOptD()), int(t.GetOd())}
		}},
		{"proto2", func() any {
			m := &proto2.Record{Name: proto.String(""), D: proto.Float64(0), Kids: []*proto2.Record{{Name: proto.String("")}}}
			proto.SetExtension(m, proto2.E_Sub, &proto2.Record{Name: proto.String(""), D: proto.Float64(0)})
			return m
		}, func() any { return &proto2.Record{} }, func(m any, i int) {
			r := m.(*proto2.Record)
			*r.D = float64(i)
			*r.Kids[0].Name = fmt.Sprint(i)
			*proto.GetExtension(r, proto2.E_Sub).(*proto2.Record).D = float64(i)
		}, func(m any) []int {
			r := m.(*proto2.Record)
			var k int
			fmt.Sscan(r.Kids[0].GetName(), &k)
			return []int{int(r.GetD()), k, int(proto.GetExtension(r, proto2.E_Sub).(*proto2.Record).GetD())}
		}},
		{"opaque", func() any {
			return opaque.Holder_builder{Kids: []*opaque.Node{opaque.Node_builder{Eager: opaque.Node_builder{}.Build()}.Build()}, Names: []string{""}}.Build()
		}, func() any { return &opaque.Holder{} }, func(m any, i int) {
			h := m.(*opaque.Holder)
			h.GetKids()[0].SetD(float64(i))
			h.GetKids()[0].GetEager().SetData([]byte{b(i)})
			h.GetNames()[0] = fmt.Sprint(i)
		}, func(m any) []int {
			h := m.(*opaque.Holder)
			var n int
			fmt.Sscan(h.GetNames()[0], &n)
			return []int{int(h.GetKids()[0].GetD()), int(h.GetKids()[0].GetEager().GetData()[0]), n}
		}},
		{"dynamic", func() any {
			m := dynamicpb.NewMessage(dynMD)
			leaf := m.Mutable(dynMD.Fields().ByName("leaf")).Message()
			leaf.Set(leaf.Descriptor().Fields().ByName("b"), protoreflect.ValueOfBytes([]byte{0}))
			return m
		}, func() any { return &open3.Tree{} }, func(m any, i int) {
			d := m.(*dynamicpb.Message)
			d.Set(dynMD.Fields().ByName("d"), protoreflect.ValueOfFloat64(float64(i)))
			leaf := d.Mutable(dynMD.Fields().ByName("leaf")).Message()
			leaf.Get(leaf.Descriptor().Fields().ByName("b")).Bytes()[0] = b(i)
		}, func(m any) []int {
			t := m.(*open3.Tree)
			return []int{int(t.D), int(t.Leaf.B[0])}
		}},
		{"self-coding", func() any { return &selfCoded{Data: []byte{0}} }, func() any { return &selfCoded{} }, func(m any, i int) {
			s := m.(*selfCoded)
			s.Data[0] = b(i)
			s.Text = fmt.Sprint(i)
		}, func(m any) []int {
			s := m.(*selfCoded)
			var n int
			fmt.Sscan(s.Text, &n)
			return []int{int(s.Data[0]), n}
		}},
		{"legacy", func() any {
			return &oracleLegacy{Data: []byte{0}, Kid: &oracleLegacy{}, Kids: []*oracleLegacy{{Nums: []int32{0}}}}
		}, func() any { return &oracleLegacy{} }, func(m any, i int) {
			l := m.(*oracleLegacy)
			l.Data[0] = b(i)
			l.Kid.Text = fmt.Sprint(i)
			l.Kids[0].Nums[0] = int32(i)
		}, func(m any) []int {
			l := m.(*oracleLegacy)
			var n int
			fmt.Sscan(l.Kid.Text, &n)
			return []int{int(l.Data[0]), n, int(l.Kids[0].Nums[0])}
		}},
	}
}

// TestHandoverCloneSenderChangesAfterSend: with Clone, as over a socket, a
// sender may change its message, nested fields in place included, as
// soon as SendMsg returns; the receiver must see each message as it was
// when sent, and (under -race) no memory of the sender's. Both
// directions of a stream; with CallCopy(Clone) on a Share channel too.
func TestHandoverCloneSenderChangesAfterSend(t *testing.T) {
	const n = 30
	for _, c := range oracleStampedMessages() {
		t.Run(c.name, func(t *testing.T) {
			check := func(m any, want int) error {
				for _, got := range c.read(m) {
					if got != want {
						return fmt.Errorf("message %d arrived as %v", want, c.read(m))
					}
				}
				return nil
			}
			svc := &oracleRawSvc{saw: make(chan string, 1), bidi: func(ss grpc.ServerStream) error {
				var got []any
				for i := 0; ; i++ {
					in := c.recv()
					if err := ss.RecvMsg(in); err != nil {
						if errors.Is(err, io.EOF) {
							break
						}
						return err
					}
					got = append(got, in)
				}
				// Read what arrived only now, after the client changed
				// its message n times.
				for i, in := range got {
					if err := check(in, i+1); err != nil {
						return fmt.Errorf("handler: %v", err)
					}
				}
				out := c.msg()
				for i := range n {
					c.stamp(out, i+1)
					if err := ss.SendMsg(out); err != nil {
						return err
					}
				}
				return nil
			}}
			run := func(t *testing.T, cc grpc.ClientConnInterface, opts ...grpc.CallOption) {
				s, err := cc.NewStream(timeoutCtx(t), anyBidiDesc, "/oracle.Raw/Bidi", opts...)
				if err != nil {
					t.Fatal(err)
				}
				out := c.msg()
				for i := range n {
					c.stamp(out, i+1)
					if err := s.SendMsg(out); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				var got []any
				for {
					in := c.recv()
					if err := s.RecvMsg(in); err != nil {
						if !errors.Is(err, io.EOF) {
							t.Fatal(err)
						}
						break
					}
					got = append(got, in)
				}
				if len(got) != n {
					t.Fatalf("got %d messages, want %d", len(got), n)
				}
				for i, in := range got {
					if err := check(in, i+1); err != nil {
						t.Fatalf("client: %v", err)
					}
				}
			}
			run(t, realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil))
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				if isShare(t, m) {
					run(t, ch, inproc.CallCopy(inproc.Clone))
				} else {
					run(t, ch)
				}
			})
		})
	}
}

// TestHandoverConcurrentReadersWhileSent: readers of a message may run
// while it is sent, in every mode: another goroutine marshals and sizes
// the client's message, and the handler does the same to what it got,
// which with Share shares the client's nested messages. Run with -race.
func TestHandoverConcurrentReadersWhileSent(t *testing.T) {
	for _, c := range oracleStampedMessages() {
		t.Run(c.name, func(t *testing.T) {
			read := func(m any) {
				switch m := m.(type) {
				case proto.Message:
					_, _ = proto.Marshal(m)
					_ = proto.Size(m)
					_ = proto.Equal(m, m)
				case protoadapt.MessageV1:
					_, _ = proto.Marshal(protoadapt.MessageV2Of(m))
				}
			}
			svc := &oracleRawSvc{saw: make(chan string, 1), bidi: func(ss grpc.ServerStream) error {
				for {
					in := c.recv()
					if err := ss.RecvMsg(in); err != nil {
						if errors.Is(err, io.EOF) {
							return nil
						}
						return err
					}
					read(in)
					if err := ss.SendMsg(in); err != nil {
						return err
					}
				}
			}}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				msg := c.msg()
				c.stamp(msg, 7)
				stop := meanwhileRead(func() { read(msg) })
				defer stop()
				s, err := ch.NewStream(timeoutCtx(t), anyBidiDesc, "/oracle.Raw/Bidi")
				if err != nil {
					t.Fatal(err)
				}
				for range 20 {
					if err := s.SendMsg(msg); err != nil {
						t.Fatal(err)
					}
					in := c.recv()
					if err := s.RecvMsg(in); err != nil {
						t.Fatal(err)
					}
					read(in)
					for _, v := range c.read(in) {
						if v != 7 {
							t.Fatalf("got %v", c.read(in))
						}
					}
				}
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				if err := s.RecvMsg(c.recv()); !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
			})
		})
	}
}
