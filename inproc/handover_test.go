package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

var negZero = math.Copysign(0, -1)

// wireOf describes m as its receiver would see it: its deterministic wire
// encoding (which tells -0 from +0 and keeps NaN payloads), how many bytes
// of unknown fields it holds at any depth (which tells a field parsed from
// unknown bytes from one kept as unknown), and how many nil messages it
// holds where a socket's receiver would have empty ones.
func wireOf(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true, AllowPartial: true}.Marshal(m)
	unknown, nils := looseEnds(m.ProtoReflect())
	return fmt.Sprintf("%x unknown=%d nil=%d err=%v", b, unknown, nils, err)
}

// looseEnds counts the bytes of unknown fields in m at any depth, and the
// nil messages in its lists, maps and oneofs.
func looseEnds(m protoreflect.Message) (unknown, nils int) {
	if !m.IsValid() {
		return 0, 1
	}
	unknown = len(m.GetUnknown())
	add := func(sub protoreflect.Message) {
		u, n := looseEnds(sub)
		unknown, nils = unknown+u, nils+n
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					add(mv.Message())
					return true
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := range v.List().Len() {
					add(v.List().Get(i).Message())
				}
			}
		case fd.Message() != nil:
			add(v.Message())
		}
		return true
	})
	return unknown, nils
}

// echoed sends req through a unary call whose handler answers with the
// request it got, and returns what the handler saw, what the client got
// back, and the call's code.
func echoed(cc grpc.ClientConnInterface, req proto.Message) string {
	reply := req.ProtoReflect().New().Interface()
	err := cc.Invoke(context.Background(), anyUnary, req, reply)
	if err != nil {
		return fmt.Sprintf("code=%v", status.Code(err))
	}
	return "reply " + wireOf(reply)
}

// echoSvc is an anySvc whose handler answers with its request, telling
// the test what it saw.
func echoSvc(newReq func() proto.Message, saw chan<- string) *anySvc {
	return &anySvc{newReq: newReq, resp: func(req proto.Message) (proto.Message, error) {
		saw <- wireOf(req)
		return req, nil
	}}
}

// handoverCase is a message to send and what makes a new one of its type.
type handoverCase struct {
	name string
	msg  func() proto.Message
}

func withUnknown[M proto.Message](m M, b []byte) M {
	m.ProtoReflect().SetUnknown(b)
	return m
}

func deepTree(depth int) *open3.Tree {
	t := &open3.Tree{S: "leaf"}
	for range depth - 1 {
		t = &open3.Tree{Child: t}
	}
	return t
}

func handoverCases() []handoverCase {
	nan := math.Float64frombits(0x7ff8000000000123)
	knownAsUnknown := protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "from unknown")
	noteAsUnknown := protowire.AppendString(protowire.AppendTag(nil, 100, protowire.BytesType), "note")
	return []handoverCase{
		{"open3/negative-zero/flat", func() proto.Message { return &open3.Leaf{D: negZero, F: float32(negZero), S: "s"} }},
		{"open3/negative-zero/nested", func() proto.Message {
			return &open3.Tree{D: negZero, F: float32(negZero), Leaf: &open3.Leaf{D: negZero},
				Leaves: []*open3.Leaf{{D: negZero}}, ByName: map[string]*open3.Leaf{"a": {D: negZero}},
				Ds: []float64{negZero}, OptD: proto.Float64(negZero), Choice: &open3.Tree_Od{Od: negZero}}
		}},
		{"open3/nan-payload", func() proto.Message { return &open3.Tree{D: nan, Leaf: &open3.Leaf{D: nan}} }},
		{"wrappers/negative-zero", func() proto.Message { return wrapperspb.Double(negZero) }},
		{"proto2/negative-zero", func() proto.Message { return &proto2.Record{Name: proto.String("n"), D: proto.Float64(negZero)} }},
		{"proto2/required-unset", func() proto.Message { return &proto2.Record{} }},
		{"proto2/group-required-unset", func() proto.Message { return &proto2.Record{Name: proto.String("n"), Grp: &proto2.Record_Grp{}} }},
		{"editions/negative-zero", func() proto.Message {
			return &editions.Node{D: negZero, Pd: proto.Float64(negZero), Eager: &editions.Node{D: negZero}}
		}},
		{"editions/utf8", func() proto.Message { return &editions.Node{Raw: proto.String("\xff ok")} }},
		{"editions/utf8-refused", func() proto.Message { return &editions.Node{Label: proto.String("\xff")} }},
		{"opaque/negative-zero", func() proto.Message {
			return opaque.Node_builder{D: negZero, Pd: proto.Float64(negZero), Child: opaque.Node_builder{D: negZero}.Build()}.Build()
		}},
		{"opaque/holder", func() proto.Message {
			return opaque.Holder_builder{Kids: []*opaque.Node{opaque.Node_builder{D: negZero}.Build()}, S: proto.String("s")}.Build()
		}},
		{"hybrid/negative-zero", func() proto.Message {
			return hybrid.Node_builder{D: negZero, Eager: hybrid.Node_builder{D: negZero}.Build()}.Build()
		}},
		{"depth/10000", func() proto.Message { return deepTree(10000) }},
		{"depth/10001", func() proto.Message { return deepTree(10001) }},
		{"depth/10002", func() proto.Message { return deepTree(10002) }},
		{"unknown/malformed", func() proto.Message { return withUnknown(&open3.Leaf{S: "s"}, []byte{0xff}) }},
		{"unknown/malformed-nested", func() proto.Message {
			return &open3.Tree{Leaf: withUnknown(&open3.Leaf{S: "s"}, []byte{0xff})}
		}},
		{"unknown/known-field", func() proto.Message { return withUnknown(&open3.Leaf{}, knownAsUnknown) }},
		{"unknown/known-field-nested", func() proto.Message {
			return &open3.Tree{Leaves: []*open3.Leaf{withUnknown(&open3.Leaf{}, knownAsUnknown)}}
		}},
		{"unknown/extension", func() proto.Message { return withUnknown(&proto2.Record{Name: proto.String("n")}, noteAsUnknown) }},
		{"nil/list-element", func() proto.Message { return &open3.Tree{Leaves: []*open3.Leaf{{S: "a"}, nil}} }},
		{"nil/map-value", func() proto.Message { return &open3.Tree{ByName: map[string]*open3.Leaf{"a": nil}} }},
		{"nil/oneof-message", func() proto.Message { return &open3.Tree{Choice: &open3.Tree_Ol{}} }},
		{"nil/proto2-list-element", func() proto.Message { return &proto2.Record{Name: proto.String("n"), Kids: []*proto2.Record{nil}} }},
	}
}

// TestHandoverAgreesWithGRPC sends messages of every generated shape
// through a unary call that echoes them, over grpc-go and in each mode,
// and checks that the handler and the client see the same bytes, or the
// call fails with the same code: -0 and NaN payloads kept, the recursion
// limit, unknown fields parsed as a socket's receiver parses them.
func TestHandoverAgreesWithGRPC(t *testing.T) {
	for _, c := range handoverCases() {
		t.Run(c.name, func(t *testing.T) {
			newReq := func() proto.Message { return c.msg().ProtoReflect().New().Interface() }
			run := func(cc grpc.ClientConnInterface, saw chan string) string {
				got := echoed(cc, c.msg())
				select {
				case s := <-saw:
					return "handler " + s + " | " + got
				default:
					return "handler - | " + got
				}
			}
			saw := make(chan string, 1)
			want := run(anyReference(t, echoSvc(newReq, saw)), saw)
			forEachMode(t, func(t *testing.T, m testMode) {
				saw := make(chan string, 1)
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, echoSvc(newReq, saw))
				var got string
				if err := catch(func() error { got = run(ch, saw); return nil }); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("inproc:  %.300s\ngrpc-go: %.300s", got, want)
				}
			})
		})
	}
}

// meanwhileRead runs read over and over on another goroutine until the
// returned function is called, as a sender's other readers may while it
// sends (concurrent readers of a message are legal).
func meanwhileRead(read func()) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			default:
				read()
			}
		}
	}()
	return func() { close(done); <-ended }
}

// TestReceiverOwnsItsTopLevel changes, in the handler, a received request
// as generated setters and protobuf's reflection do (an extension set, a
// repeated field of the opaque API appended to and replaced), while the
// client reads its own message, and checks that the client's message is
// unchanged: with Share the receiver's top level is its own (its
// extension map, the slice headers the opaque API keeps behind pointers,
// its presence bookkeeping), as it is with Clone and over a socket. Under
// the race detector it also shows that no memory is written that the
// sender reads.
func TestReceiverOwnsItsTopLevel(t *testing.T) {
	kids := opaque.File_opaque_zoo_opaque_proto.Messages().ByName("Holder").Fields().ByName("kids")
	cases := []struct {
		name   string
		msg    func() proto.Message
		change func(req proto.Message)
		read   func(m proto.Message) string
	}{
		{"proto2/extensions", func() proto.Message {
			m := &proto2.Record{Name: proto.String("n")}
			proto.SetExtension(m, proto2.E_Note, "client's")
			return m
		}, func(req proto.Message) {
			proto.SetExtension(req, proto2.E_Note, "handler's")
			proto.SetExtension(req, proto2.E_Sub, &proto2.Record{Name: proto.String("added")})
		}, func(m proto.Message) string {
			return fmt.Sprint(proto.GetExtension(m, proto2.E_Note), proto.HasExtension(m, proto2.E_Sub))
		}},
		{"opaque/repeated", func() proto.Message {
			return opaque.Holder_builder{Kids: []*opaque.Node{opaque.Node_builder{Label: proto.String("client's")}.Build()}, S: proto.String("s")}.Build()
		}, func(req proto.Message) {
			h := req.(*opaque.Holder)
			h.ProtoReflect().Mutable(kids).List().Append(protoreflect.ValueOfMessage(opaque.Node_builder{Label: proto.String("handler's")}.Build().ProtoReflect()))
			h.ClearS()
			h.SetNames([]string{"handler's"})
		}, func(m proto.Message) string {
			h := m.(*opaque.Holder)
			return fmt.Sprint(len(h.GetKids()), h.HasS(), h.GetNames())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			newReq := func() proto.Message { return c.msg().ProtoReflect().New().Interface() }
			svc := &anySvc{newReq: newReq, resp: func(req proto.Message) (proto.Message, error) {
				c.change(req)
				return &emptypb.Empty{}, nil
			}}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, svc)
				req := c.msg()
				want := c.read(req)
				stop := meanwhileRead(func() { c.read(req) })
				for range 20 {
					if err := ch.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
						t.Fatal(err)
					}
				}
				stop()
				if got := c.read(req); got != want {
					t.Errorf("the handler's changes reached the client's message: %s, was %s", got, want)
				}
			})
		})
	}
}

// TestLazyFieldsReadWhileSent sends a message whose lazy field was not
// decoded yet, and one holding such messages, while another goroutine
// reads the field through its generated getter, which decodes it with an
// atomic compare-and-swap: the handover must read it as atomically (the
// race detector tells), and deliver what grpc-go delivers.
func TestLazyFieldsReadWhileSent(t *testing.T) {
	node := opaque.Node_builder{Label: proto.String("top"), Child: opaque.Node_builder{Label: proto.String("lazy child")}.Build()}.Build()
	b, err := proto.Marshal(opaque.Holder_builder{Kids: []*opaque.Node{node}}.Build())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Node", "Holder"} {
		t.Run(name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				saw := make(chan string, 1)
				ch.RegisterService(anyDesc, echoSvc(func() proto.Message {
					if name == "Node" {
						return &opaque.Node{}
					}
					return &opaque.Holder{}
				}, saw))
				decode := func() (*opaque.Holder, proto.Message) {
					holder := &opaque.Holder{}
					if err := proto.Unmarshal(b, holder); err != nil {
						t.Fatal(err)
					}
					if name == "Node" {
						return holder, holder.GetKids()[0]
					}
					return holder, holder
				}
				for range 20 {
					_, sent := decode()
					want := wireOf(sent) // not of msg: it may decode msg's lazy fields
					holder, msg := decode()
					started := make(chan struct{})
					var once sync.Once
					stop := meanwhileRead(func() {
						once.Do(func() { close(started) })
						_ = holder.GetKids()[0].GetChild().GetLabel()
					})
					<-started
					got := echoed(ch, msg)
					stop()
					if s := <-saw; s != want || got != "reply "+want {
						t.Fatalf("handler saw %s, client got %s; sent %s", s, got, want)
					}
				}
			})
		})
	}
}

// FuzzHandover decodes the fuzzer's bytes into messages of every
// generated shape and API and sends each through the echoing call over
// grpc-go and in every mode: the handler and the client must see the same
// bytes (-0, NaN payloads, unknown fields and extensions as a socket's
// receiver parses them), or the call must fail with the same code, and
// the client's message must be as it was sent. `go test` runs the seeds,
// the handover cases' messages; `go test -fuzz FuzzHandover` explores.
func FuzzHandover(f *testing.F) {
	for _, c := range handoverCases() {
		if b, err := (proto.MarshalOptions{AllowPartial: true}).Marshal(c.msg()); err == nil && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	kinds := []func() proto.Message{
		func() proto.Message { return &open3.Tree{} },
		func() proto.Message { return &proto2.Record{} },
		func() proto.Message { return &editions.Node{} },
		func() proto.Message { return &opaque.Holder{} },
		func() proto.Message { return &opaque.Node{} },
		func() proto.Message { return &hybrid.Node{} },
	}
	saw := make(chan string, 1)
	svc := func(newReq func() proto.Message) *anySvc { return echoSvc(newReq, saw) }
	type target struct {
		name string
		cc   grpc.ClientConnInterface
	}
	conns := make([][]target, len(kinds))
	for i, k := range kinds {
		conns[i] = append(conns[i], target{"grpc-go", anyReference(f, svc(k))})
		for _, m := range modes {
			ch := inproc.New(m.opts...)
			f.Cleanup(ch.Stop)
			ch.RegisterService(anyDesc, svc(k))
			conns[i] = append(conns[i], target{m.name, ch})
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i, k := range kinds {
			msg := k()
			if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(b, msg); err != nil {
				continue
			}
			sent := wireOf(msg)
			var want string
			for j, c := range conns[i] {
				got := echoed(c.cc, msg)
				select {
				case s := <-saw:
					got = "handler " + s + " | " + got
				default:
				}
				if j == 0 {
					want = got
				} else if got != want {
					t.Errorf("%T in %s:\ninproc:  %.300s\ngrpc-go: %.300s", msg, c.name, got, want)
				}
				if after := wireOf(msg); after != sent {
					t.Errorf("%T in %s: the client's message changed: %.200s, sent %.200s", msg, c.name, after, sent)
				}
			}
		}
	})
}

// TestHandoverExtensionSetByDynamicType: the client sets the registered
// extension zoo.proto2.sub through a dynamic type of the same descriptor
// (as a proxy working from descriptors does), so its value is a dynamic
// message. Over a socket the handler decodes it with the registry and
// gets a *proto2.Record from proto.GetExtension; the handler's view must
// be the same in every mode.
func TestHandoverExtensionSetByDynamicType(t *testing.T) {
	dynSub := dynamicpb.NewExtensionType(proto2.E_Sub.TypeDescriptor().Descriptor())
	dynNote := dynamicpb.NewExtensionType(proto2.E_Note.TypeDescriptor().Descriptor())
	msg := func() proto.Message {
		m := &proto2.Record{Name: proto.String("n")}
		rm := m.ProtoReflect()
		sub := rm.Mutable(dynSub.TypeDescriptor()).Message()
		sub.Set(sub.Descriptor().Fields().ByName("name"), protoreflect.ValueOfString("inner"))
		rm.Set(dynNote.TypeDescriptor(), protoreflect.ValueOfString("note"))
		return m
	}
	svc := &anySvc{newReq: func() proto.Message { return &proto2.Record{} }, resp: func(req proto.Message) (proto.Message, error) {
		var out string
		err := catch(func() error {
			sub := proto.GetExtension(req, proto2.E_Sub).(*proto2.Record)
			out = fmt.Sprintf("sub %q note %q", sub.GetName(), proto.GetExtension(req, proto2.E_Note))
			return nil
		})
		if err != nil {
			out = err.Error()
		}
		return &proto2.Record{Name: proto.String(out)}, nil
	}}
	run := func(cc grpc.ClientConnInterface) string {
		reply := &proto2.Record{}
		if err := cc.Invoke(context.Background(), anyUnary, msg(), reply); err != nil {
			return "error " + err.Error()
		}
		return reply.GetName()
	}
	want := run(anyReference(t, svc))
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc)
		if got := run(ch); got != want {
			t.Errorf("handler saw: %s\ngrpc-go's saw: %s", got, want)
		}
	})
}

// TestHandoverReplyReused: the client receives into a reply that already
// holds fields, unknown fields and extensions of an earlier call; grpc-go
// resets it before decoding, so nothing of the old reply survives.
func TestHandoverReplyReused(t *testing.T) {
	reps, _ := oracleRecordExtensions(t)
	cases := []struct {
		name  string
		resp  func() proto.Message
		reply func() proto.Message
	}{
		{"proto2/extensions", func() proto.Message { return &proto2.Record{Name: proto.String("new")} }, func() proto.Message {
			m := &proto2.Record{Name: proto.String("old"), D: proto.Float64(1), Kids: []*proto2.Record{{Name: proto.String("k")}}}
			proto.SetExtension(m, proto2.E_Note, "old note")
			m.ProtoReflect().Mutable(reps.TypeDescriptor()).List().Append(protoreflect.ValueOfString("old rep"))
			m.ProtoReflect().SetUnknown([]byte{0xa0, 0x06, 0x01})
			return m
		}},
		{"proto2/extensions-into-extensions", func() proto.Message {
			m := &proto2.Record{Name: proto.String("new")}
			proto.SetExtension(m, proto2.E_Note, "new note")
			return m
		}, func() proto.Message {
			m := &proto2.Record{Name: proto.String("old")}
			proto.SetExtension(m, proto2.E_Sub, &proto2.Record{Name: proto.String("old sub")})
			return m
		}},
		{"empty/unknown", func() proto.Message { return &emptypb.Empty{} }, func() proto.Message {
			m := &emptypb.Empty{}
			m.ProtoReflect().SetUnknown([]byte{0x08, 0x01})
			return m
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := &anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }, resp: func(proto.Message) (proto.Message, error) {
				return c.resp(), nil
			}}
			run := func(cc grpc.ClientConnInterface) string {
				reply := c.reply()
				if err := cc.Invoke(context.Background(), anyUnary, &emptypb.Empty{}, reply); err != nil {
					return "error " + err.Error()
				}
				return wireOf(reply)
			}
			want := run(anyReference(t, svc))
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, svc)
				if got := run(ch); got != want {
					t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

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

// oracleSelf is a proto2 message as gogoproto generates them: no
// ProtoReflect, its own Marshal, Unmarshal and Size, and a required
// field. Its Marshal refuses a message whose Fail is set, and its
// Unmarshal a text of "refused on decode", as gogoproto's custom types
// may refuse values.
type oracleSelf struct {
	Text             *string `protobuf:"bytes,1,req,name=text" json:"text,omitempty"`
	Fail             *bool   `protobuf:"varint,2,opt,name=fail" json:"fail,omitempty"`
	XXX_unrecognized []byte  `json:"-"`
	XXX_sizecache    int32   `json:"-"`
}

const oracleRefused = "refused on decode"

func (m *oracleSelf) Reset() { *m = oracleSelf{} }
func (m *oracleSelf) String() string {
	return fmt.Sprintf("text=%v fail=%v", m.Text != nil, m.Fail != nil)
}
func (*oracleSelf) ProtoMessage() {}

func (m *oracleSelf) Size() int {
	b, _ := m.Marshal()
	return len(b)
}

func (m *oracleSelf) Marshal() ([]byte, error) {
	var b []byte
	if m == nil {
		return nil, nil // as gogoproto's Size is, nil-safe
	}
	if m.Text != nil {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), *m.Text)
	}
	if m.Fail != nil {
		if *m.Fail {
			return nil, errors.New("oracleSelf: refused on encode")
		}
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), 0)
	}
	return append(b, m.XXX_unrecognized...), nil
}

func (m *oracleSelf) Unmarshal(b []byte) error {
	return eachWireField("oracleSelf", b, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, _ := protowire.ConsumeString(value)
			if v == oracleRefused {
				return errors.New("oracleSelf: refused on decode")
			}
			m.Text = &v
		case num == 2 && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(value)
			f := v != 0
			m.Fail = &f
		default:
			m.XXX_unrecognized = append(m.XXX_unrecognized, field...)
		}
		return nil
	})
}

// eachWireField calls f with each field of b in turn: its number and wire
// type, the whole field (tag and value) and its value; it stops at f's
// first error, and fails, as name's Unmarshal, at a malformed field.
func eachWireField(name string, b []byte, f func(num protowire.Number, typ protowire.Type, field, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New(name + ": bad tag")
		}
		l := protowire.ConsumeFieldValue(num, typ, b[n:])
		if l < 0 {
			return errors.New(name + ": bad field")
		}
		if err := f(num, typ, b[:n+l], b[n:n+l]); err != nil {
			return err
		}
		b = b[n+l:]
	}
	return nil
}

var _ protoadapt.MessageV1 = (*oracleSelf)(nil)

// oracleRawSvc is a service whose handlers receive into whatever Go
// value newIn makes (a gogoproto message itself, not protobuf's wrapper
// of it) and answer with what out makes of it.
type oracleRawSvc struct {
	newIn func() any
	out   func(in any) any
	saw   chan string
	bidi  func(ss grpc.ServerStream) error // if set, the stream's handler
}

func oracleDescribe(m any) string {
	if v1, ok := m.(protoadapt.MessageV1); ok {
		return fmt.Sprintf("%T %s", m, wireOf(protoadapt.MessageV2Of(v1)))
	}
	return fmt.Sprintf("%T", m)
}

var oracleRawDesc = &grpc.ServiceDesc{
	ServiceName: "oracle.Raw",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		s := srv.(*oracleRawSvc)
		s.saw <- unaryBegan
		defer func() { s.saw <- unaryEnded }()
		in := s.newIn()
		if err := dec(in); err != nil {
			if status.Code(err) != codes.Canceled { // a client that failed its own send cancels, sooner or later
				s.saw <- "recv " + status.Code(err).String()
			}
			return nil, err
		}
		s.saw <- oracleDescribe(in)
		return s.out(in), nil
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Bidi", ServerStreams: true, ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		s := srv.(*oracleRawSvc)
		if s.bidi != nil {
			return s.bidi(ss)
		}
		defer func() { s.saw <- handlerEnded }()
		for {
			in := s.newIn()
			if err := ss.RecvMsg(in); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				if status.Code(err) != codes.Canceled { // a client that failed its own send cancels, sooner or later
					s.saw <- "recv " + status.Code(err).String()
				}
				return err
			}
			s.saw <- oracleDescribe(in)
			if err := ss.SendMsg(s.out(in)); err != nil {
				return err // not told: with Inline, SendMsg learns of the client's failure
			}
		}
	}}},
}

// oracleRawRun sends req by the unary method and by the bidi one, and
// receives the answers into what newReply makes.
func oracleRawRun(cc grpc.ClientConnInterface, svc *oracleRawSvc, req any, newReply func() any) string {
	var b strings.Builder
	reply := newReply()
	err := catch(func() error { return cc.Invoke(context.Background(), "/oracle.Raw/Unary", req, reply) })
	fmt.Fprintf(&b, "unary: handler [%s] client ", oracleUnaryTold(svc.saw))
	if err != nil {
		fmt.Fprintf(&b, "code=%v", status.Code(err))
	} else {
		b.WriteString(oracleDescribe(reply))
	}
	sent := false
	err = catch(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		s, err := cc.NewStream(ctx, anyBidiDesc, "/oracle.Raw/Bidi")
		if err != nil {
			return err
		}
		if err := s.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		sent = true
		if err := s.CloseSend(); err != nil {
			return err
		}
		b.WriteString(" | stream: client")
		for {
			in := newReply()
			if err := s.RecvMsg(in); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			b.WriteString(" " + oracleDescribe(in))
		}
	})
	if err != nil {
		fmt.Fprintf(&b, " code=%v", status.Code(err))
	}
	// A handler that got the request may fail its receive, whose status
	// reaches the client before the handler tells what it saw: wait for
	// its end. One whose client failed its own send may not run at all
	// (Inline).
	told := oracleDrain
	if svc.bidi == nil && sent {
		told = oracleUntilEnded
	}
	fmt.Fprintf(&b, " handler [%s]", told(svc.saw))
	return b.String()
}

// TestHandoverSelfCodingChecks: grpc-go hands a gogoproto message to
// protobuf's Marshal and Unmarshal, which call the message's own methods
// and then check its required fields: a receiver's message missing one
// is refused (Internal), a Marshal that fails fails the send, an
// Unmarshal that fails fails the receive. In-process, every mode must
// agree, in both directions of a unary call and of a stream.
func TestHandoverSelfCodingChecks(t *testing.T) {
	self := func() any { return &oracleSelf{} }
	cases := []struct {
		name     string
		req      func() any
		newIn    func() any
		out      func(in any) any
		newReply func() any
	}{
		// The sender's type has no required field; the receiver's has.
		{"required-missing/request", func() any { return &emptypb.Empty{} }, self,
			func(any) any { return &emptypb.Empty{} }, func() any { return &emptypb.Empty{} }},
		{"required-missing/response", func() any { return &emptypb.Empty{} }, func() any { return &emptypb.Empty{} },
			func(any) any { return &emptypb.Empty{} }, self},
		{"required-missing/other-self-coder", func() any { return &selfCoded{Data: []byte("d")} }, self,
			func(any) any { return &selfCoded{Data: []byte("d")} }, self},
		{"required-present/from-generated", func() any { return wrapperspb.String("t") }, self,
			func(in any) any { return in }, self},
		{"marshal-fails/request", func() any { return &oracleSelf{Text: proto.String("t"), Fail: proto.Bool(true)} }, self,
			func(any) any { return &oracleSelf{Text: proto.String("ok")} }, self},
		{"marshal-fails/response", func() any { return &oracleSelf{Text: proto.String("t")} }, self,
			func(any) any { return &oracleSelf{Text: proto.String("t"), Fail: proto.Bool(true)} }, self},
		{"unmarshal-fails/request", func() any { return &oracleSelf{Text: proto.String(oracleRefused)} }, self,
			func(any) any { return &oracleSelf{Text: proto.String("ok")} }, self},
		{"unmarshal-fails/response", func() any { return &oracleSelf{Text: proto.String("t")} }, self,
			func(any) any { return &oracleSelf{Text: proto.String(oracleRefused)} }, self},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := &oracleRawSvc{newIn: c.newIn, out: c.out, saw: make(chan string, 16)}
			ref := realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil)
			want := oracleRawRun(ref, svc, c.req(), c.newReply)
			forEachMode(t, func(t *testing.T, m testMode) {
				svc := &oracleRawSvc{newIn: c.newIn, out: c.out, saw: make(chan string, 16)}
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				got := oracleRawRun(ch, svc, c.req(), c.newReply)
				if isShare(t, m) && (strings.HasPrefix(c.name, "marshal-fails") || strings.HasPrefix(c.name, "unmarshal-fails")) {
					// Share calls neither a self-coding message's Marshal
					// nor its Unmarshal (see inproc.Share): what only they
					// refuse crosses, and the call succeeds.
					if strings.Contains(got, "code=") {
						t.Errorf("Share refused what only the message's own coding refuses:\n%s", got)
					}
					return
				}
				if got != want {
					t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

// TestHandoverNilMessages: untyped and typed nil messages, as requests, as
// unary responses and as stream messages both ways, of a flat type, an
// open one, a proto2 one with a required field, and a self-coding one.
func TestHandoverNilMessages(t *testing.T) {
	cases := []struct {
		name string
		nil_ func() any
		recv func() any
	}{
		{"untyped", func() any { return nil }, func() any { return &typepbType{} }},
		{"flat", func() any { return (*typepbType)(nil) }, func() any { return &typepbType{} }},
		{"proto2-required", func() any { return (*proto2Record)(nil) }, func() any { return &proto2Record{} }},
		{"self-coding-required", func() any { return (*oracleSelf)(nil) }, func() any { return &oracleSelf{} }},
		// A typed nil selfCoded is left out: its Marshal panics on nil,
		// as grpc-go finds when it calls it; inproc does not call it.
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			newSvc := func() *oracleRawSvc {
				return &oracleRawSvc{newIn: c.recv, out: func(any) any { return c.nil_() }, saw: make(chan string, 16)}
			}
			svc := newSvc()
			ref := realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil)
			want := oracleRawRun(ref, svc, c.nil_(), c.recv)
			forEachMode(t, func(t *testing.T, m testMode) {
				svc := newSvc()
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				if got := oracleRawRun(ch, svc, c.nil_(), c.recv); got != want {
					t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

type (
	typepbType   = typepb.Type
	proto2Record = proto2.Record
)
