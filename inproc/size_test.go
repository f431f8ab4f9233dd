package inproc

import (
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestSizePlanAgreesWithSize measures messages of every kind of field a
// size plan knows, at the values where a size is easy to get wrong (zero,
// negative, the widest varints, -0 and NaN floats, unknown fields), and
// checks each against proto.Size; and that messages with fields it does
// not know get no plan and are still measured right.
func TestSizePlanAgreesWithSize(t *testing.T) {
	unknown := protowire.AppendTag(nil, 99, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 300)
	withUnknown := func(m proto.Message) proto.Message {
		m.ProtoReflect().SetUnknown(unknown)
		return m
	}
	long := strings.Repeat("é", 100)
	planned := []proto.Message{
		&echov1.EchoRequest{}, &echov1.EchoRequest{Text: "a"}, &echov1.EchoRequest{Text: long},
		&listv1.ListResponse{Strings: []string{"", "a", long}},
		wrapperspb.Bool(true), wrapperspb.Bool(false),
		wrapperspb.Int32(-1), wrapperspb.Int32(math.MinInt32), wrapperspb.Int32(math.MaxInt32), wrapperspb.Int32(127), wrapperspb.Int32(128),
		wrapperspb.Int64(math.MinInt64), wrapperspb.Int64(math.MaxInt64), wrapperspb.Int64(-1),
		wrapperspb.UInt32(math.MaxUint32), wrapperspb.UInt32(1), wrapperspb.UInt64(math.MaxUint64), wrapperspb.UInt64(1 << 35),
		wrapperspb.Float(0), wrapperspb.Float(float32(math.Copysign(0, -1))), wrapperspb.Float(float32(math.NaN())), wrapperspb.Float(1.5),
		wrapperspb.Double(0), wrapperspb.Double(math.Copysign(0, -1)), wrapperspb.Double(math.Inf(-1)),
		wrapperspb.String(""), wrapperspb.Bytes(nil), wrapperspb.Bytes([]byte{}), wrapperspb.Bytes(make([]byte, 200)),
		&testgrpc.Payload{Type: testgrpc.PayloadType(-5), Body: []byte("b")}, &testgrpc.Payload{},
		&timestamppb.Timestamp{Seconds: -62135596800, Nanos: 999999999}, &durationpb.Duration{Seconds: 1 << 40, Nanos: -1},
		&fieldmaskpb.FieldMask{Paths: []string{"a.b", "", long}},
		withUnknown(&echov1.EchoRequest{Text: "x"}), withUnknown(&listv1.ListResponse{}),
	}
	for _, m := range planned {
		tp := newTypedPlan(m, reflect.TypeOf(m), m.ProtoReflect().Descriptor())
		if tp.sizer == nil || !tp.byType || tp.initCheck {
			t.Errorf("%T: no size plan (%v), or not by type (%v), or an init check (%v)", m, tp.sizer != nil, tp.byType, tp.initCheck)
			continue
		}
		if n, err := tp.measure(nil, reflect.ValueOf(m).UnsafePointer()); err != nil || n != proto.Size(m) {
			t.Errorf("%T %v: measured %d, %v; proto.Size says %d", m, m, n, err, proto.Size(m))
		}
	}
	unplanned := []proto.Message{
		&testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("nested")}},        // a message field
		structpb.NewStringValue("oneof"),                                                   // a oneof
		&structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewNullValue()}}, // a map
	}
	for _, m := range unplanned {
		var last atomic.Pointer[typedPlan]
		if n, err := measure(m, &last); err != nil || n != proto.Size(m) {
			t.Errorf("%T: measured %d, %v; proto.Size says %d", m, n, err, proto.Size(m))
		}
		if tp := last.Load(); tp.sizer != nil {
			t.Errorf("%T has a size plan", m)
		}
	}
}
