package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/grpc"
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

// TestUTF8Editions: dynamic messages of an edition-2023 file, whose
// strings are checked by default and not with utf8_validation = NONE, in
// plain fields, repeated fields, maps and nested messages; inproc must
// agree with proto.Marshal (and grpc-go) on each.
func TestUTF8Editions(t *testing.T) {
	none := &descriptorpb.FieldOptions{Features: &descriptorpb.FeatureSet{Utf8Validation: descriptorpb.FeatureSet_NONE.Enum()}}
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	msgT := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	field := func(name string, num int32, label *descriptorpb.FieldDescriptorProto_Label, typ *descriptorpb.FieldDescriptorProto_Type, typeName string, opts *descriptorpb.FieldOptions) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num), Label: label, Type: typ, Options: opts}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("attack/editions.proto"),
		Package: proto.String("attack.editions"),
		Syntax:  proto.String("editions"),
		Edition: descriptorpb.Edition_EDITION_2023.Enum(),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("M"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("checked", 1, opt, str, "", nil),
				field("unchecked", 2, opt, str, "", none),
				field("list", 3, rep, str, "", nil),
				field("list_unchecked", 4, rep, str, "", none),
				field("sub", 5, opt, msgT, ".attack.editions.M", nil),
				field("map", 6, rep, msgT, ".attack.editions.M.MapEntry", nil),
			},
			NestedType: []*descriptorpb.DescriptorProto{{
				Name:    proto.String("MapEntry"),
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				Field: []*descriptorpb.FieldDescriptorProto{
					field("key", 1, opt, str, "", nil),
					field("value", 2, opt, str, "", none),
				},
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Messages().ByName("M")
	fields := md.Fields()
	newM := func() proto.Message { return dynamicpb.NewMessage(md) }
	set := func(name string, v string) *dynamicpb.Message {
		m := dynamicpb.NewMessage(md)
		f := fields.ByName(protoreflect.Name(name))
		switch {
		case f.IsMap():
			m.Mutable(f).Map().Set(protoreflect.ValueOfString(v).MapKey(), protoreflect.ValueOfString("ok"))
		case f.IsList():
			m.Mutable(f).List().Append(protoreflect.ValueOfString(v))
		default:
			m.Set(f, protoreflect.ValueOfString(v))
		}
		return m
	}
	mapValue := dynamicpb.NewMessage(md)
	mf := fields.ByName("map")
	mapValue.Mutable(mf).Map().Set(protoreflect.ValueOfString("k").MapKey(), protoreflect.ValueOfString(badUTF8))
	nested := dynamicpb.NewMessage(md)
	nested.Set(fields.ByName("sub"), protoreflect.ValueOfMessage(set("checked", badUTF8)))
	nestedUnchecked := dynamicpb.NewMessage(md)
	nestedUnchecked.Set(fields.ByName("sub"), protoreflect.ValueOfMessage(set("unchecked", badUTF8)))
	cases := []struct {
		name string
		m    proto.Message
	}{
		{"checked", set("checked", badUTF8)},
		{"unchecked", set("unchecked", badUTF8)},
		{"list", set("list", badUTF8)},
		{"list-unchecked", set("list_unchecked", badUTF8)},
		{"map-key", set("map", badUTF8)},
		{"map-value-unchecked", mapValue},
		{"nested", nested},
		{"nested-unchecked", nestedUnchecked},
	}
	svc := &anySvc{newReq: newM}
	ref := anyReference(t, svc)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, merr := proto.Marshal(tc.m)
			refErr := ref.Invoke(timeoutCtx(t), anyUnary, tc.m, &emptypb.Empty{})
			t.Logf("proto.Marshal: %v; grpc-go: %v", merr, refErr)
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, svc)
				err := ch.Invoke(timeoutCtx(t), anyUnary, tc.m, &emptypb.Empty{})
				if status.Code(err) != status.Code(refErr) {
					t.Errorf("inproc: %v; grpc-go: %v", err, refErr)
				}
			})
		})
	}
	_ = codes.OK
}

// statusLine is how a call ended, as a client sees it: code and
// message, which is what status.Convert(err) gives a program.
func statusLine(err error) string {
	if err == nil {
		return "OK"
	}
	st := status.Convert(err)
	return fmt.Sprintf("%v: %q", st.Code(), st.Message())
}

// utf8StatusCase is a message a sender sends and the message type its
// receiver decodes into.
type utf8StatusCase struct {
	name string
	send func() proto.Message
	recv func() proto.Message
}

func utf8StatusCases() []utf8StatusCase {
	dyn := func(m proto.Message) func() proto.Message {
		return func() proto.Message {
			d := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
			proto.Merge(d, m)
			return d
		}
	}
	return []utf8StatusCase{
		{"generated/echo", func() proto.Message { return &echov1.EchoRequest{Text: badUTF8} }, func() proto.Message { return &echov1.EchoRequest{} }},
		{"generated/flat-list", func() proto.Message { return &flat3.Flat{Names: []string{"a", badUTF8}} }, func() proto.Message { return &flat3.Flat{} }},
		{"generated/map", func() proto.Message { return &flat3.Rich{Kv: map[string]string{"k": badUTF8}} }, func() proto.Message { return &flat3.Rich{} }},
		{"generated/oneof", func() proto.Message { return &flat3.Rich{Pick: &flat3.Rich_Os{Os: badUTF8}} }, func() proto.Message { return &flat3.Rich{} }},
		{"generated/editions-ext", func() proto.Message {
			m := &editionsutf8.Root{}
			proto.SetExtension(m, editionsutf8.E_ExtS, badUTF8)
			return m
		}, func() proto.Message { return &editionsutf8.Root{} }},
		{"dynamic", dyn(&echov1.EchoRequest{Text: badUTF8}), func() proto.Message { return &echov1.EchoRequest{} }},
		// The sender's field is not checked (utf8_validation NONE); the
		// receiver's type, of the same field number, is proto3: its
		// decoding refuses.
		{"receiver-refuses", func() proto.Message { return &editionsutf8.Unchecked{S: badUTF8} }, func() proto.Message { return &flat3.Leaf{} }},
	}
}

// utf8StatusRun sends c's message as a unary request, as a unary
// response, and on a bidi stream both ways, and tells how each ended.
func utf8StatusRun(t *testing.T, c utf8StatusCase, conn func(*anySvc) grpc.ClientConnInterface) string {
	t.Helper()
	var out []string
	// A unary request.
	cc := conn(&anySvc{newReq: c.recv})
	err := cc.Invoke(context.Background(), anyUnary, c.send(), &emptypb.Empty{})
	out = append(out, "unary request: "+statusLine(err))
	// A unary response.
	cc = conn(&anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }, resp: func(proto.Message) (proto.Message, error) { return c.send(), nil }})
	err = cc.Invoke(context.Background(), anyUnary, &emptypb.Empty{}, c.recv())
	out = append(out, "unary response: "+statusLine(err))
	// A stream: the client sends, the handler receives.
	handlerErr := make(chan string, 1)
	cc = conn(&anySvc{bidi: func(ss grpc.ServerStream) error {
		err := ss.RecvMsg(c.recv())
		handlerErr <- statusLine(err)
		return err
	}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	s, err := cc.NewStream(ctx, anyBidiDesc, anyBidi)
	if err != nil {
		t.Fatal(err)
	}
	if sendErr := s.SendMsg(c.send()); sendErr == nil {
		s.CloseSend()
		// The client's RecvMsg first: with Inline it runs the handler.
		recvErr := s.RecvMsg(c.recv())
		out = append(out, "stream request: client send OK, handler recv "+receive(t, handlerErr, "the handler's RecvMsg")+", client recv "+statusLine(recvErr))
	} else {
		// (With Inline the handler never runs, as Inline's doc says: its
		// client left before driving it.)
		out = append(out, "stream request: client send "+statusLine(sendErr)+", client recv "+statusLine(s.RecvMsg(c.recv())))
	}
	// A stream: the handler sends, the client receives.
	handlerSendErr := make(chan string, 1)
	cc = conn(&anySvc{bidi: func(ss grpc.ServerStream) error {
		err := ss.SendMsg(c.send())
		handlerSendErr <- statusLine(err)
		return err
	}})
	s, err = cc.NewStream(ctx, anyBidiDesc, anyBidi)
	if err != nil {
		t.Fatal(err)
	}
	err = s.RecvMsg(c.recv())
	var then error
	if err == nil {
		// With Inline, the handler's SendMsg returns once the client
		// takes the message and asks for more.
		then = s.RecvMsg(c.recv())
	}
	// What the handler's SendMsg returns when the client's decoding
	// fails depends on timing over a socket (and with Inline it waits for
	// the client): only a failure of its own counts.
	if hs := receive(t, handlerSendErr, "the handler's SendMsg"); strings.HasPrefix(hs, "Internal") {
		out = append(out, "stream response: handler send "+hs)
	}
	out = append(out, "stream response: client recv "+statusLine(err))
	if err == nil && !errors.Is(then, io.EOF) {
		out = append(out, "then "+statusLine(then))
	}
	return strings.Join(out, "\n")
}

// TestUTF8StatusMessageAsGRPC: a string that is not UTF-8 ends the call
// with Internal, as over grpc-go; the status's message must be grpc-go's
// too, which is what a program logs or matches (protobuf's fast path says
// "string field contains invalid UTF-8", naming no field).
func TestUTF8StatusMessageAsGRPC(t *testing.T) {
	for _, c := range utf8StatusCases() {
		t.Run(c.name, func(t *testing.T) {
			anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				return utf8StatusRun(t, c, serve)
			})
		})
	}
}
