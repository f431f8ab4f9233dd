package handover

import (
	"sync/atomic"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestMeasureAgreesWithMarshal checks measure against the oracle it
// stands in for, proto.Marshal: each message, valid or with an invalid
// string in one place (top level, a list, a nested message, a list of
// messages, a map key or value, a oneof, an optional field, a dynamic
// message), must be refused by both or by neither, and a valid one
// measured as long as its encoding; the first time through measure, then
// through the plans kept, as a stream's later messages are.
func TestMeasureAgreesWithMarshal(t *testing.T) {
	const bad = "ok\xffno"
	structWith := func(key, val string) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{key: structpb.NewStringValue(val)}}
	}
	cases := []struct {
		name    string
		m       proto.Message
		invalid bool
	}{
		{"string/valid", &echov1.EchoRequest{Text: "héllo"}, false},
		{"string/invalid", &echov1.EchoRequest{Text: bad}, true},
		{"list/valid", &listv1.ListResponse{Strings: []string{"a", "b"}}, false},
		{"list/invalid", &listv1.ListResponse{Strings: []string{"a", bad}}, true},
		{"empty", &listv1.ListResponse{}, false},
		{"typed-nil", (*echov1.EchoRequest)(nil), false},
		{"bytes-not-checked", &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte(bad)}}, false},
		{"nested/invalid", &testgrpc.SimpleResponse{Username: "u", OauthScope: bad}, true},
		{"wrapper/invalid", wrapperspb.String(bad), true},
		{"map-key/invalid", structWith(bad, "v"), true},
		{"map-value/invalid", structWith("k", bad), true},
		{"map/valid", structWith("k", "v"), false},
		{"oneof-in-list/invalid", &structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("a"), structpb.NewStringValue(bad)}}, true},
		{"deep/invalid", &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewStructValue(structWith("b", bad))}}, true},
		{"any-url/invalid", &anypb.Any{TypeUrl: bad}, true},
		{"proto2/not-checked", &descriptorpb.FileDescriptorProto{Name: proto.String(bad)}, false},
		{"dynamic/invalid", dynamicEcho(t, bad), true},
		{"dynamic/valid", dynamicEcho(t, "fine"), false},
		{"required/unset", &descriptorpb.UninterpretedOption_NamePart{NamePart: proto.String("a")}, true},
		{"required/set", &descriptorpb.UninterpretedOption_NamePart{NamePart: proto.String("a"), IsExtension: proto.Bool(false)}, false},
		{"required-nested/unset", &descriptorpb.UninterpretedOption{Name: []*descriptorpb.UninterpretedOption_NamePart{{NamePart: proto.String("a")}}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, marshalErr := proto.Marshal(tc.m)
			if (marshalErr != nil) != tc.invalid {
				t.Fatalf("oracle: proto.Marshal gives %v, the test expects invalid=%v", marshalErr, tc.invalid)
			}
			var last atomic.Pointer[strategy]
			check := func(how string, n int, err error) {
				t.Helper()
				if (err != nil) != tc.invalid {
					t.Fatalf("%s: %v, proto.Marshal: %v", how, err, marshalErr)
				}
				if err == nil && n != len(b) {
					t.Fatalf("%s measured %d bytes, proto.Marshal wrote %d", how, n, len(b))
				}
			}
			n, err := measure(tc.m, &last)
			check("measure", n, err)
			n, err = measure(tc.m, &last)
			check("measure from the kept plan", n, err)
			if n, err, ok := measureKnown(tc.m, &last); ok {
				check("measureKnown", n, err)
			}
		})
	}
}

// dynamicEcho is an echo.v1.EchoRequest as a dynamic message of text.
func dynamicEcho(t *testing.T, text string) proto.Message {
	t.Helper()
	fd := protodesc.ToFileDescriptorProto(echov1.File_echo_v1_echo_proto)
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := file.Messages().ByName("EchoRequest")
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("text"), protoreflectString(text))
	return m
}

func protoreflectString(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }
