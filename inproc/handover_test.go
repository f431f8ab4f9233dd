package inproc_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"
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
