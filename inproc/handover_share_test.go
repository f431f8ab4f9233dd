package inproc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/runtime/protoiface"
	"google.golang.org/protobuf/runtime/protoimpl"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

var oracleRegisteredReps = sync.OnceValue(func() protoreflect.ExtensionType {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("oracle/registered_ext.proto"),
		Package:    proto.String("oracleReg"),
		Syntax:     proto.String("proto2"),
		Dependency: []string{(&proto2.Record{}).ProtoReflect().Descriptor().ParentFile().Path()},
		Extension: []*descriptorpb.FieldDescriptorProto{{
			Name:     proto.String("reps"),
			Number:   proto.Int32(170),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
			Type:     descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			Extendee: proto.String(".zoo.proto2.Record"),
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	// Registered, so that a socket's receiver knows it, as it would a
	// generated repeated extension.
	xt := dynamicpb.NewExtensionType(fd.Extensions().Get(0))
	if err := protoregistry.GlobalTypes.RegisterExtension(xt); err != nil {
		panic(err)
	}
	return xt
})

func oracleField(m proto.Message, name string) protoreflect.FieldDescriptor {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic("no field " + name)
	}
	return fd
}

// oracleTopLevelChange is a change a handler makes to its request's own
// top-level fields, as protobuf's API (reflection, Merge, merging
// Unmarshal) makes it, with nothing nested touched: a scalar field with
// explicit presence set again, a oneof's scalar set again. Over a socket,
// and with Clone, it never reaches the client's message; Share promises
// that the receiver's top level is its own.
type oracleTopLevelChange struct {
	name   string
	msg    func() proto.Message
	change func(req proto.Message)
}

func oracleTopLevelChanges() []oracleTopLevelChange {
	return []oracleTopLevelChange{
		{"proto2/optional-double/reflect-set", func() proto.Message {
			return &proto2.Record{Name: proto.String("client's"), D: proto.Float64(1)}
		}, func(req proto.Message) {
			req.ProtoReflect().Set(oracleField(req, "d"), protoreflect.ValueOfFloat64(2))
		}},
		{"proto2/required-string/reflect-set", func() proto.Message {
			return &proto2.Record{Name: proto.String("client's")}
		}, func(req proto.Message) {
			req.ProtoReflect().Set(oracleField(req, "name"), protoreflect.ValueOfString("handler's"))
		}},
		{"proto2/required-string/merging-unmarshal", func() proto.Message {
			return &proto2.Record{Name: proto.String("client's")}
		}, func(req proto.Message) {
			b := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "handler's")
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, req); err != nil {
				panic(err)
			}
		}},
		{"proto3/optional-double/reflect-set", func() proto.Message {
			return &open3.Tree{S: "client's", OptD: proto.Float64(1)}
		}, func(req proto.Message) {
			req.ProtoReflect().Set(oracleField(req, "opt_d"), protoreflect.ValueOfFloat64(2))
		}},
		{"proto3/optional-double/merging-unmarshal", func() proto.Message {
			return &open3.Tree{S: "client's", OptD: proto.Float64(1)}
		}, func(req proto.Message) {
			b := protowire.AppendFixed64(protowire.AppendTag(nil, 11, protowire.Fixed64Type), 0x4000000000000000)
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, req); err != nil {
				panic(err)
			}
		}},
		{"proto3/oneof-double/reflect-set", func() proto.Message {
			return &open3.Tree{S: "client's", Choice: &open3.Tree_Od{Od: 1}}
		}, func(req proto.Message) {
			req.ProtoReflect().Set(oracleField(req, "od"), protoreflect.ValueOfFloat64(2))
		}},
		{"proto3/oneof-double/merge", func() proto.Message {
			return &open3.Tree{S: "client's", Choice: &open3.Tree_Od{Od: 1}}
		}, func(req proto.Message) {
			proto.Merge(req, &open3.Tree{Choice: &open3.Tree_Od{Od: 2}})
		}},
		{"proto2/repeated-extension/reflect-append", func() proto.Message {
			m := &proto2.Record{Name: proto.String("client's")}
			m.ProtoReflect().Mutable(oracleRegisteredReps().TypeDescriptor()).List().Append(protoreflect.ValueOfString("client's"))
			return m
		}, func(req proto.Message) {
			req.ProtoReflect().Mutable(oracleRegisteredReps().TypeDescriptor()).List().Append(protoreflect.ValueOfString("handler's"))
		}},
		{"opaque/optional-string/reflect-set", func() proto.Message {
			return opaque.Holder_builder{S: proto.String("client's")}.Build()
		}, func(req proto.Message) {
			req.ProtoReflect().Set(oracleField(req, "s"), protoreflect.ValueOfString("handler's"))
		}},
		{"opaque/optional-string/merging-unmarshal", func() proto.Message {
			return opaque.Holder_builder{S: proto.String("client's")}.Build()
		}, func(req proto.Message) {
			b := protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "handler's")
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, req); err != nil {
				panic(err)
			}
		}},
	}
}

// changingSvc's handler makes change to each request, which it receives
// into a new message of msg's type, and answers Empty; a panic in change
// is the call's error.
func changingSvc(msg func() proto.Message, change func(req proto.Message)) *anySvc {
	return &anySvc{newReq: func() proto.Message { return msg().ProtoReflect().New().Interface() }, resp: func(req proto.Message) (proto.Message, error) {
		if err := catch(func() error { change(req); return nil }); err != nil {
			return nil, err
		}
		return &emptypb.Empty{}, nil
	}}
}

// TestHandoverShareTopLevelChanges: the handler changes its request's
// top-level scalar fields through protobuf's own API while the client
// reads its message; the client's message must stay as it was sent, as
// over grpc-go. Under the race detector it also shows whether the
// handler writes memory the client reads.
func TestHandoverShareTopLevelChanges(t *testing.T) {
	for _, c := range oracleTopLevelChanges() {
		t.Run(c.name, func(t *testing.T) {
			svc := changingSvc(c.msg, c.change)
			run := func(t *testing.T, cc grpc.ClientConnInterface, concurrent bool) string {
				req := c.msg()
				want := wireOf(req)
				stop := func() {}
				if concurrent {
					stop = meanwhileRead(func() { _, _ = proto.Marshal(req) })
				}
				for range 5 {
					if err := cc.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
						stop()
						return fmt.Sprintf("error %v", err)
					}
				}
				stop()
				if got := wireOf(req); got != want {
					return fmt.Sprintf("the handler's change reached the client's message: %s, sent %s", got, want)
				}
				return "unchanged"
			}
			if got := run(t, anyReference(t, svc), false); got != "unchanged" {
				t.Fatalf("grpc-go: %s", got)
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, svc)
				if got := run(t, ch, !isShare(t, m)); got != "unchanged" {
					t.Error(got)
				}
			})
		})
	}
}

// TestHandoverShareTopLevelChangesRace is TestHandoverShareTopLevelChanges
// with the client reading its message while the handler changes its own:
// with Share too, which the race detector judges (run with -race).
func TestHandoverShareTopLevelChangesRace(t *testing.T) {
	for _, c := range oracleTopLevelChanges()[:1] {
		svc := &anySvc{newReq: func() proto.Message { return c.msg().ProtoReflect().New().Interface() }, resp: func(req proto.Message) (proto.Message, error) {
			c.change(req)
			return &emptypb.Empty{}, nil
		}}
		forEachMode(t, func(t *testing.T, m testMode) {
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, svc)
			req := c.msg()
			stop := meanwhileRead(func() { _, _ = proto.Marshal(req) })
			for range 20 {
				if err := ch.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
					t.Fatal(err)
				}
			}
			stop()
		})
	}
}

// TestHandoverShareAppendToReceivedList: handlers own their requests'
// top levels, so each may append to a top-level list or bytes field of
// its own request, as handlers commonly do to fill in defaults, and keep
// the request afterwards. One client message, sent to two calls in turn
// (reading a message while sending it is legal; the client changes
// nothing), whose lists have room left past their length, as lists built
// by append do: over a socket, and with Clone, what the first handler
// appended stays in its request; the second handler's appends must not
// land in the first handler's request.
func TestHandoverShareAppendToReceivedList(t *testing.T) {
	type kept struct{ leaf, name, data string }
	cases := []struct {
		name   string
		msg    func() proto.Message
		append func(req proto.Message, id string)
		read   func(req proto.Message) kept
	}{
		{"open3", func() proto.Message {
			leaves := append(make([]*open3.Leaf, 0, 4), &open3.Leaf{S: "client's"})
			names := append(make([]string, 0, 4), "client's")
			return &open3.Tree{Leaves: leaves, Names: names}
		}, func(req proto.Message, id string) {
			r := req.(*open3.Tree)
			r.Leaves = append(r.Leaves, &open3.Leaf{S: id})
			r.Names = append(r.Names, id)
		}, func(req proto.Message) kept {
			r := req.(*open3.Tree)
			return kept{leaf: r.Leaves[len(r.Leaves)-1].S, name: r.Names[len(r.Names)-1]}
		}},
		{"open3/bytes", func() proto.Message {
			return &open3.Leaf{B: append(make([]byte, 0, 8), 'c')}
		}, func(req proto.Message, id string) {
			r := req.(*open3.Leaf)
			r.B = append(r.B, id[len(id)-1])
		}, func(req proto.Message) kept {
			r := req.(*open3.Leaf)
			return kept{data: string(r.B)}
		}},
		{"proto2", func() proto.Message {
			kids := append(make([]*proto2.Record, 0, 4), &proto2.Record{Name: proto.String("client's")})
			return &proto2.Record{Name: proto.String("n"), Kids: kids}
		}, func(req proto.Message, id string) {
			r := req.(*proto2.Record)
			r.Kids = append(r.Kids, &proto2.Record{Name: proto.String(id)})
		}, func(req proto.Message) kept {
			r := req.(*proto2.Record)
			return kept{leaf: r.Kids[len(r.Kids)-1].GetName()}
		}},
		{"opaque", func() proto.Message {
			kids := append(make([]*opaque.Node, 0, 4), opaque.Node_builder{Label: proto.String("client's")}.Build())
			names := append(make([]string, 0, 4), "client's")
			return opaque.Holder_builder{Kids: kids, Names: names}.Build()
		}, func(req proto.Message, id string) {
			r := req.(*opaque.Holder)
			kids := oracleField(req, "kids")
			r.ProtoReflect().Mutable(kids).List().Append(protoreflect.ValueOfMessage(opaque.Node_builder{Label: proto.String(id)}.Build().ProtoReflect()))
			r.SetNames(append(r.GetNames(), id))
		}, func(req proto.Message) kept {
			r := req.(*opaque.Holder)
			return kept{leaf: r.GetKids()[len(r.GetKids())-1].GetLabel(), name: r.GetNames()[len(r.GetNames())-1]}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				var kept []proto.Message
				var calls int
				svc := &anySvc{newReq: func() proto.Message { return c.msg().ProtoReflect().New().Interface() }, resp: func(req proto.Message) (proto.Message, error) {
					calls++
					c.append(req, fmt.Sprintf("call %d", calls))
					kept = append(kept, req)
					return &emptypb.Empty{}, nil
				}}
				conn := serve(svc)
				req := c.msg()
				for range 2 {
					if err := conn.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
						return err.Error()
					}
				}
				return fmt.Sprintf("first handler's request ends with %+v, second's with %+v; client's %+v", c.read(kept[0]), c.read(kept[1]), c.read(req))
			})
		})
	}
}

// oracleLegacyExt is a legacy message (no ProtoReflect, no Marshal of
// its own) with extensions, kept as protobuf-go keeps a legacy message's:
// in XXX_InternalExtensions.
type oracleLegacyExt struct {
	Name                   *string                   `protobuf:"bytes,1,opt,name=name" json:"name,omitempty"`
	XXX_InternalExtensions protoimpl.ExtensionFields `json:"-"`
	XXX_unrecognized       []byte                    `json:"-"`
	XXX_sizecache          int32                     `json:"-"`
}

func (m *oracleLegacyExt) Reset()         { *m = oracleLegacyExt{} }
func (m *oracleLegacyExt) String() string { return fmt.Sprintf("name=%v", m.Name != nil) }
func (*oracleLegacyExt) ProtoMessage()    {}
func (*oracleLegacyExt) ExtensionRangeArray() []protoiface.ExtensionRangeV1 {
	return []protoiface.ExtensionRangeV1{{Start: 100, End: 199}}
}

var oracleLegacyNote = &protoimpl.ExtensionInfo{
	ExtendedType:  (*oracleLegacyExt)(nil),
	ExtensionType: (*string)(nil),
	Field:         100,
	Name:          "oracle.legacy_note",
	Tag:           "bytes,100,opt,name=legacy_note",
}

// TestHandoverShareLegacyExtensions: the handler sets an extension on its
// request, a legacy message; the client's message, read meanwhile, must
// not change (its extension map is the receiver's own with Share too).
func TestHandoverShareLegacyExtensions(t *testing.T) {
	svc := &oracleRawSvc{saw: make(chan string, 64), newIn: func() any { return &oracleLegacyExt{} }, out: func(in any) any {
		m := protoadapt.MessageV2Of(in.(*oracleLegacyExt))
		proto.SetExtension(m, oracleLegacyNote, "handler's")
		return &emptypb.Empty{}
	}}
	read := func(m *oracleLegacyExt) string {
		return fmt.Sprint(proto.GetExtension(protoadapt.MessageV2Of(m), oracleLegacyNote))
	}
	run := func(t *testing.T, cc grpc.ClientConnInterface) {
		req := &oracleLegacyExt{Name: proto.String("n")}
		proto.SetExtension(protoadapt.MessageV2Of(req), oracleLegacyNote, "client's")
		stop := meanwhileRead(func() { _ = read(req) })
		for range 5 {
			if err := cc.Invoke(context.Background(), "/oracle.Raw/Unary", req, &emptypb.Empty{}); err != nil {
				stop()
				t.Fatal(err)
			}
			oracleDrain(svc.saw)
		}
		stop()
		if got := read(req); got != "client's" {
			t.Errorf("the client's extension became %q", got)
		}
	}
	run(t, realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil))
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(oracleRawDesc, svc)
		run(t, ch)
	})
}

// TestHandoverShareReplyTopLevelChange is TestHandoverShareTopLevelChanges
// on the client's side of a unary call: the handler answers every call
// with one cached response (it only reads it), and each client changes
// the top level of its own reply through protobuf's API. The cached
// response must stay as it was, as over grpc-go.
func TestHandoverShareReplyTopLevelChange(t *testing.T) {
	for _, c := range oracleTopLevelChanges() {
		t.Run(c.name, func(t *testing.T) {
			cached := c.msg()
			want := wireOf(cached)
			svc := &anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }, resp: func(proto.Message) (proto.Message, error) {
				return cached, nil
			}}
			run := func(cc grpc.ClientConnInterface) string {
				for range 3 {
					reply := c.msg().ProtoReflect().New().Interface()
					if err := cc.Invoke(context.Background(), anyUnary, &emptypb.Empty{}, reply); err != nil {
						return err.Error()
					}
					c.change(reply)
				}
				if got := wireOf(cached); got != want {
					return "the client's change reached the handler's cached response: " + got
				}
				return "unchanged"
			}
			if got := run(anyReference(t, svc)); got != "unchanged" {
				t.Fatalf("grpc-go: %s", got)
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, svc)
				if got := run(ch); got != "unchanged" {
					t.Error(got)
				}
				cached = c.msg()
			})
		})
	}
}
