package inproc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

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
