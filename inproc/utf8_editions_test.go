package inproc_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

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
