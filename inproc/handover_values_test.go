package inproc_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/apipb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/sourcecontextpb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// oracleRecordExtensions makes, without registering them anywhere, the
// extensions of zoo.proto2.Record a program may build at run time from a
// descriptor it was given (a proxy, say): a repeated string (150) and a
// Record (151). A receiver that decodes with protobuf's global registry,
// as grpc-go's codec does, does not know them.
func oracleRecordExtensions(t testing.TB) (reps, sub protoreflect.ExtensionType) {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("oracle/record_ext.proto"),
		Package:    proto.String("oracle"),
		Syntax:     proto.String("proto2"),
		Dependency: []string{"zoo2.proto"},
		Extension: []*descriptorpb.FieldDescriptorProto{{
			Name:     proto.String("reps"),
			Number:   proto.Int32(150),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(),
			Type:     descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			Extendee: proto.String(".zoo.proto2.Record"),
		}, {
			Name:     proto.String("dsub"),
			Number:   proto.Int32(151),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:     descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
			TypeName: proto.String(".zoo.proto2.Record"),
			Extendee: proto.String(".zoo.proto2.Record"),
		}},
	}
	dep := (&proto2.Record{}).ProtoReflect().Descriptor().ParentFile().Path()
	fdp.Dependency = []string{dep}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewExtensionType(fd.Extensions().Get(0)), dynamicpb.NewExtensionType(fd.Extensions().Get(1))
}

// TestHandoverUnregisteredExtensions sends a Record holding extensions of
// a type made at run time and registered nowhere: over a socket the
// receiver, which decodes with the global registry, gets them as unknown
// fields (and a Clone, which goes through the wire, agrees); a shared
// top level must not hand the receiver the sender's extension values as
// known fields of a type it cannot resolve.
func TestHandoverUnregisteredExtensions(t *testing.T) {
	reps, sub := oracleRecordExtensions(t)
	oracleAgree(t, []oracleCase{
		{name: "repeated-string", msg: func() proto.Message {
			m := &proto2.Record{Name: proto.String("n")}
			l := m.ProtoReflect().Mutable(reps.TypeDescriptor()).List()
			l.Append(protoreflect.ValueOfString("a"))
			l.Append(protoreflect.ValueOfString("b"))
			return m
		}},
		{name: "message", msg: func() proto.Message {
			m := &proto2.Record{Name: proto.String("n")}
			s := m.ProtoReflect().Mutable(sub.TypeDescriptor()).Message()
			s.Set(s.Descriptor().Fields().ByName("name"), protoreflect.ValueOfString("inner"))
			return m
		}},
	})
}

// TestHandoverFlatValues sends messages of well-known types whose every
// field the size plans know (typepb, apipb, anypb, wrappers, field
// masks, google.rpc.Status), with the values a plan must measure and
// copy as protobuf does: negative enums and int32s, -0 and NaN, empty
// and nil bytes, nil list elements at depth, unknown fields nested in
// lists and in messages, strings that are not UTF-8 nested deep.
func TestHandoverFlatValues(t *testing.T) {
	oracleAgree(t, oracleFlatCases())
}

// TestHandoverFlatValuesWithStats is TestHandoverFlatValues with a server
// stats handler, which moves the unary response's hand-over from the
// client's Transfer to the handler's Send and the client's Receive.
func TestHandoverFlatValuesWithStats(t *testing.T) {
	oracleAgree(t, oracleFlatCases(), inproc.WithServerStatsHandler(oracleNoStats{}))
}

func oracleFlatCases() []oracleCase {
	nan := math.Float32frombits(0x7fc00abc)
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 77, protowire.VarintType), 5)
	known := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "parsed")
	fullType := func() *typepb.Type {
		return &typepb.Type{
			Name: "t",
			Fields: []*typepb.Field{{
				Kind: typepb.Field_Kind(-1), Cardinality: typepb.Field_CARDINALITY_REPEATED, Number: -7,
				Name: "f", OneofIndex: math.MinInt32, Packed: true,
				Options: []*typepb.Option{{Name: "o", Value: &anypb.Any{TypeUrl: "u", Value: []byte{}}}},
			}},
			Oneofs:        []string{"", "x"},
			SourceContext: &sourcecontextpb.SourceContext{},
			Syntax:        typepb.Syntax(-3),
		}
	}
	return []oracleCase{
		{name: "typepb/full", msg: func() proto.Message { return fullType() }},
		{name: "typepb/nil-field", msg: func() proto.Message {
			m := fullType()
			m.Fields = append(m.Fields, nil)
			return m
		}},
		{name: "typepb/nil-option-deep", msg: func() proto.Message {
			m := fullType()
			m.Fields[0].Options = append(m.Fields[0].Options, nil)
			return m
		}},
		{name: "typepb/unknown-in-source-context", msg: func() proto.Message {
			m := fullType()
			m.SourceContext.ProtoReflect().SetUnknown(known)
			return m
		}},
		{name: "typepb/unknown-in-any-in-list", msg: func() proto.Message {
			m := fullType()
			m.Fields[0].Options[0].Value.ProtoReflect().SetUnknown(unknown)
			return m
		}},
		{name: "typepb/malformed-unknown-deep", msg: func() proto.Message {
			m := fullType()
			m.Fields[0].Options[0].Value.ProtoReflect().SetUnknown([]byte{0x80})
			return m
		}},
		{name: "typepb/bad-utf8-deep", msg: func() proto.Message {
			m := fullType()
			m.Fields[0].Options[0].Name = "\xc3"
			return m
		}},
		{name: "typepb/bad-utf8-list", msg: func() proto.Message {
			m := fullType()
			m.Oneofs = append(m.Oneofs, "\xed\xa0\x80") // a surrogate
			return m
		}},
		{name: "apipb/mixins", msg: func() proto.Message {
			return &apipb.Api{Name: "a", Methods: []*apipb.Method{{Name: "m", RequestStreaming: true, Syntax: typepb.Syntax(7)}},
				Mixins: []*apipb.Mixin{{}, {Name: "x", Root: "r"}}, SourceContext: &sourcecontextpb.SourceContext{FileName: "f"}}
		}},
		{name: "wrappers/float-nan", msg: func() proto.Message { return wrapperspb.Float(nan) }},
		{name: "wrappers/float-negative-zero", msg: func() proto.Message { return wrapperspb.Float(float32(negZero)) }},
		{name: "wrappers/int32-negative", msg: func() proto.Message { return wrapperspb.Int32(-1) }},
		{name: "wrappers/empty-bytes", msg: func() proto.Message { return wrapperspb.Bytes([]byte{}) }},
		{name: "wrappers/bad-utf8", msg: func() proto.Message { return wrapperspb.String("\xff") }},
		{name: "fieldmask/bad-utf8", msg: func() proto.Message { return &fieldmaskpb.FieldMask{Paths: []string{"a", "\xff"}} }},
		{name: "status/details", msg: func() proto.Message {
			return &statuspb.Status{Code: -2, Message: "m", Details: []*anypb.Any{{TypeUrl: "x"}, {Value: []byte{1}}}}
		}},
		{name: "status/nil-detail", msg: func() proto.Message {
			return &statuspb.Status{Code: 1, Details: []*anypb.Any{nil}}
		}},
		{name: "status/detail-unknown", msg: func() proto.Message {
			a := &anypb.Any{}
			a.ProtoReflect().SetUnknown(unknown)
			return &statuspb.Status{Details: []*anypb.Any{a}}
		}},
		// A flat message received as another flat message whose fields
		// overlap: what the sender's field 1 means to the receiver.
		{name: "mixed/any-as-status", msg: func() proto.Message { return &anypb.Any{TypeUrl: "\xff", Value: []byte{8, 1}} },
			recv: func() proto.Message { return &statuspb.Status{} }},
		{name: "mixed/leaf-as-type", msg: func() proto.Message { return &open3.Leaf{D: negZero, S: "s"} },
			recv: func() proto.Message { return &typepb.Type{} }},
	}
}

// TestHandoverDepthAtTheLimit sends messages nested right at protobuf's
// recursion limit and past it, through every kind of nesting: lists of
// messages (editions Holder.more, proto2 Record.kids), delimited
// (group-encoded) messages, lazy fields, and a mix of open and opaque
// APIs; the receivers must accept and refuse exactly what grpc-go's do.
func TestHandoverDepthAtTheLimit(t *testing.T) {
	if raceDetector {
		t.Skip("no concurrency to check, and 10 times slower under the race detector")
	}
	holders := func(depth int) proto.Message {
		h := &editions.Holder{S: proto.String("leaf")}
		for range depth - 1 {
			h = &editions.Holder{More: []*editions.Holder{h}}
		}
		return h
	}
	records := func(depth int) proto.Message {
		r := &proto2.Record{Name: proto.String("leaf")}
		for range depth - 1 {
			r = &proto2.Record{Name: proto.String("n"), Kids: []*proto2.Record{r}}
		}
		return r
	}
	delimited := func(depth int) proto.Message {
		n := &editions.Node{Label: proto.String("leaf")}
		for range depth - 1 {
			n = &editions.Node{Delimited: n}
		}
		return n
	}
	lazy := func(depth int) proto.Message {
		n := &editions.Node{Label: proto.String("leaf")}
		for range depth - 1 {
			n = &editions.Node{Child: n}
		}
		return n
	}
	opaqueHolders := func(depth int) proto.Message {
		h := opaque.Holder_builder{S: proto.String("leaf")}.Build()
		for range depth - 1 {
			h = opaque.Holder_builder{More: []*opaque.Holder{h}}.Build()
		}
		return h
	}
	_, _ = records, opaqueHolders // agreed too, at 9999, 10000 and 10001; left out for time
	var cases []oracleCase
	for _, d := range []int{10000, 10001} {
		for _, k := range []struct {
			name string
			f    func(int) proto.Message
		}{{"editions-holder-list", holders}, {"delimited", delimited}, {"lazy", lazy}} {
			cases = append(cases, oracleCase{name: fmt.Sprintf("%s/%d", k.name, d), msg: func() proto.Message { return k.f(d) }})
		}
	}
	oracleAgree(t, cases)
}

// TestHandoverClosedEnums sends proto2 messages (descriptor.proto's) and
// open-API messages holding values their closed enums do not define, at
// the top level, nested, and in repeated fields. A socket's receiver
// keeps such a value as an unknown field (the field stays unset); the
// receivers in-process must see the same.
func TestHandoverClosedEnums(t *testing.T) {
	oracleAgree(t, []oracleCase{
		{name: "top-level", msg: func() proto.Message {
			return &descriptorpb.FieldDescriptorProto{Name: proto.String("f"), Type: descriptorpb.FieldDescriptorProto_Type(99).Enum()}
		}},
		{name: "zero-not-defined", msg: func() proto.Message {
			return &descriptorpb.FieldDescriptorProto{Label: descriptorpb.FieldDescriptorProto_Label(0).Enum()}
		}},
		{name: "nested", msg: func() proto.Message {
			return &descriptorpb.DescriptorProto{Name: proto.String("m"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("f"), Type: descriptorpb.FieldDescriptorProto_Type(99).Enum()}}}
		}},
		{name: "repeated", msg: func() proto.Message {
			return &descriptorpb.FieldOptions{Targets: []descriptorpb.FieldOptions_OptionTargetType{
				descriptorpb.FieldOptions_TARGET_TYPE_FILE, 1234}}
		}},
		{name: "in-extension-message", msg: func() proto.Message {
			m := &descriptorpb.FileDescriptorProto{Name: proto.String("x"), MessageType: []*descriptorpb.DescriptorProto{{
				Options: &descriptorpb.MessageOptions{Features: &descriptorpb.FeatureSet{FieldPresence: descriptorpb.FeatureSet_FieldPresence(42).Enum()}}}}}
			return m
		}},
	})
}
