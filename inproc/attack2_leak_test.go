package inproc_test

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// attack2FreshDescriptor builds, anew, a proto3 file holding message
// attack2.Req { string text = 1; }: what a proxy that resolves
// descriptors per request (through server reflection, say) sends.
func attack2FreshDescriptor(t *testing.T, i int) protoreflect.MessageDescriptor {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String(fmt.Sprintf("attack2/fresh%d.proto", i)),
		Package: proto.String("attack2"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Req"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name:     proto.String("text"),
				Number:   proto.Int32(1),
				Type:     descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				JsonName: proto.String("text"),
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, new(protoregistry.Files))
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

// TestAttack2FreshDescriptorsRetained: a client sends dynamic messages
// whose descriptors it builds per call, then drops them. Over grpc-go
// nothing of a call is kept once it ends; inproc keeps, per Go type and
// descriptor, the plans it made (typedPlans, utf8Plans: package-level
// sync.Maps keyed by planKey{Go type, descriptor}), each holding the
// descriptor and through it its whole file, for ever, even past the
// Channel's Stop: about 3.5 KB a call here, without bound.
func TestAttack2FreshDescriptorsRetained(t *testing.T) {
	const n = 3000
	ch := newChannel(t, modes[0])
	ch.RegisterService(anyDesc, &anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }})
	call := func(i int) {
		md := attack2FreshDescriptor(t, i)
		req := dynamicpb.NewMessage(md)
		req.Set(md.Fields().ByNumber(1), protoreflect.ValueOfString("hello"))
		if err := ch.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
			t.Fatal(err)
		}
	}
	call(-1)
	before := heapInUse()
	for i := range n {
		call(i)
	}
	after := heapInUse()
	grown := int64(after) - int64(before)
	t.Logf("heap grew by %d bytes over %d calls (%d a call)", grown, n, grown/n)
	if grown > 1<<20 {
		t.Errorf("heap grew by %d KiB over %d calls, each of whose descriptors the client dropped (%d bytes a call)", grown>>10, n, grown/n)
	}
}
