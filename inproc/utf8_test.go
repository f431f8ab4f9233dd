package inproc_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

const badUTF8 = "ok\xffno"

// extensionFile builds a file, of the given syntax ("proto2", "proto3" or
// "editions"), that extends google.protobuf.MessageOptions with a field
// of the given type (a string, or the message typeName), and returns the
// extension's type.
func extensionFile(t *testing.T, name, syntax string, typ descriptorpb.FieldDescriptorProto_Type, typeName string, deps ...string) protoreflect.ExtensionType {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("attack/" + name + ".proto"),
		Package:    proto.String("attack." + name),
		Syntax:     proto.String(syntax),
		Dependency: append([]string{"google/protobuf/descriptor.proto"}, deps...),
		Extension: []*descriptorpb.FieldDescriptorProto{{
			Name:     proto.String("ext"),
			JsonName: proto.String("ext"),
			Number:   proto.Int32(50001),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:     typ.Enum(),
			Extendee: proto.String(".google.protobuf.MessageOptions"),
		}},
	}
	if typeName != "" {
		fdp.Extension[0].TypeName = proto.String(typeName)
	}
	if syntax == "editions" {
		fdp.Edition = descriptorpb.Edition_EDITION_2023.Enum()
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewExtensionType(fd.Extensions().Get(0))
}

// TestUTF8Extensions: proto.Marshal (and so grpc-go) refuses an
// extension field whose string must be UTF-8 and is not (a proto3 or
// edition-2023 string extension, or a proto2 extension whose message
// value holds a proto3 string); inproc's walker only looks at the Go
// struct's fields and at md.Fields(), never at extensions.
func TestUTF8Extensions(t *testing.T) {
	withExt := func(xt protoreflect.ExtensionType, v any) proto.Message {
		m := &descriptorpb.MessageOptions{}
		proto.SetExtension(m, xt, v)
		return m
	}
	badStruct := func() any {
		// A dynamic google.protobuf.Struct with a bad value, as the
		// dynamic extension type wants a dynamic message.
		s := &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewStringValue("v")}}
		b, _ := proto.Marshal(s)
		dm := dynamicpb.NewMessage((&structpb.Struct{}).ProtoReflect().Descriptor())
		if err := proto.Unmarshal(b, dm); err != nil {
			t.Fatal(err)
		}
		// set the key to invalid UTF-8
		fd := dm.Descriptor().Fields().ByName("fields")
		mp := dm.Mutable(fd).Map()
		var val protoreflect.Value
		mp.Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool { val = v; return false })
		mp.Set(protoreflect.ValueOfString(badUTF8).MapKey(), val)
		return dm
	}
	cases := []struct {
		name string
		m    proto.Message
	}{
		{"proto3-string-ext", withExt(extensionFile(t, "p3", "proto3", descriptorpb.FieldDescriptorProto_TYPE_STRING, ""), badUTF8)},
		{"edition2023-string-ext", withExt(extensionFile(t, "ed", "editions", descriptorpb.FieldDescriptorProto_TYPE_STRING, ""), badUTF8)},
		{"proto2-ext-of-proto3-message", withExt(extensionFile(t, "p2", "proto2", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Struct", "google/protobuf/struct.proto"), badStruct())},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, merr := proto.Marshal(tc.m)
			want := codes.OK
			if merr != nil {
				want = codes.Internal
			}
			svc := &anySvc{newReq: func() proto.Message { return &descriptorpb.MessageOptions{} }}
			refErr := anyReference(t, svc).Invoke(timeoutCtx(t), anyUnary, tc.m, &emptypb.Empty{})
			if status.Code(refErr) != want {
				t.Fatalf("reference: grpc-go gives %v, proto.Marshal %v", refErr, merr)
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, svc)
				err := ch.Invoke(timeoutCtx(t), anyUnary, tc.m, &emptypb.Empty{})
				if status.Code(err) != want {
					t.Errorf("inproc: %v; grpc-go: %v (proto.Marshal: %v)", err, refErr, merr)
				}
			})
		})
	}
}

// nilMessageCases are messages holding a nil message where proto.Marshal
// encodes an empty one.
var nilMessageCases = []struct {
	name   string
	m      func() proto.Message
	newReq func() proto.Message
}{
	{"map-value-nil", func() proto.Message { return &structpb.Struct{Fields: map[string]*structpb.Value{"a": nil}} }, func() proto.Message { return &structpb.Struct{} }},
	{"oneof-message-nil", func() proto.Message { return &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: nil}} }, func() proto.Message { return &structpb.Value{} }},
	{"oneof-list-nil", func() proto.Message { return &structpb.Value{Kind: &structpb.Value_ListValue{ListValue: nil}} }, func() proto.Message { return &structpb.Value{} }},
	{"list-element-nil", func() proto.Message { return &structpb.ListValue{Values: []*structpb.Value{nil}} }, func() proto.Message { return &structpb.ListValue{} }},
	{"nested-map-value-nil", func() proto.Message {
		return &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: &structpb.Struct{Fields: map[string]*structpb.Value{"a": nil}}}}
	}, func() proto.Message { return &structpb.Value{} }},
}

// TestUTF8NilMessages: proto.Marshal encodes a nil message held in a
// map value or a oneof as an empty message, and grpc-go sends it, in both
// directions. inproc's walker dereferences the nil pointer (checkSingle
// calls p.check on the nil message's address): a nil-pointer panic in the
// client's goroutine for a request, and in the handler's goroutine for a
// response, which kills the process (under -race, checkptr makes both a
// fatal error). Each case runs in a child process so that the crash is
// reported as a failure rather than ending the test binary.
func TestUTF8NilMessages(t *testing.T) {
	if os.Getenv("INPROC_UTF8_NIL_CHILD") != "" {
		t.Skip("child")
	}
	for _, tc := range nilMessageCases {
		for _, dir := range []string{"request", "response"} {
			t.Run(tc.name+"/"+dir, func(t *testing.T) {
				if _, err := proto.Marshal(tc.m()); err != nil {
					t.Fatalf("oracle: proto.Marshal refuses: %v", err)
				}
				svc := &anySvc{newReq: tc.newReq, resp: func(proto.Message) (proto.Message, error) { return tc.m(), nil }}
				req := tc.m()
				if dir == "response" {
					req = tc.newReq()
				}
				if err := anyReference(t, svc).Invoke(timeoutCtx(t), anyUnary, req, tc.newReq()); err != nil {
					t.Fatalf("reference: grpc-go gives %v", err)
				}
				for _, m := range modes {
					cmd := exec.Command(os.Args[0], "-test.run=^TestUTF8NilMessagesChild$", "-test.count=1")
					cmd.Env = append(os.Environ(), "INPROC_UTF8_NIL_CHILD="+tc.name+"|"+dir+"|"+m.name)
					out, err := cmd.CombinedOutput()
					if err != nil {
						lines := crashLines(out)
						t.Errorf("%s: grpc-go OK, inproc child failed (%v):\n%s", m.name, err, lines)
					}
				}
			})
		}
	}
}

func TestUTF8NilMessagesChild(t *testing.T) {
	spec := os.Getenv("INPROC_UTF8_NIL_CHILD")
	if spec == "" {
		t.Skip("run by TestUTF8NilMessages")
	}
	parts := strings.Split(spec, "|")
	for _, tc := range nilMessageCases {
		if tc.name != parts[0] {
			continue
		}
		for _, m := range modes {
			if m.name != parts[2] {
				continue
			}
			svc := &anySvc{newReq: tc.newReq, resp: func(proto.Message) (proto.Message, error) { return tc.m(), nil }}
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, svc)
			req := tc.m()
			if parts[1] == "response" {
				req = tc.newReq()
			}
			if err := ch.Invoke(timeoutCtx(t), anyUnary, req, tc.newReq()); err != nil {
				t.Fatalf("inproc: %v", err)
			}
			return
		}
	}
	t.Fatalf("no case %q", spec)
}

var _ = inproc.Clone
