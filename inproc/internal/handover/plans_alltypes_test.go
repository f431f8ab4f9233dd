package handover

import (
	"bytes"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	validate "github.com/envoyproxy/protoc-gen-validate/validate"
	bookv1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
	binlogpb "google.golang.org/genproto/googleapis/rpc/context/attribute_context"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	grpcbinlog "google.golang.org/grpc/binarylog/grpc_binarylog_v1"
	channelzpb "google.golang.org/grpc/channelz/grpc_channelz_v1"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	testcore "google.golang.org/grpc/interop/grpc_testing/core"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/gofeaturespb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/apipb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/sourcecontextpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"google.golang.org/protobuf/types/pluginpb"
)

// linkedZoo makes sure every package above is linked, so that its
// messages are in protoregistry.GlobalTypes.
var linkedZoo = []proto.Message{
	&validate.FieldRules{}, &bookv1.Book{}, &echov1.EchoRequest{}, &listv1.ListResponse{}, &sensorv1.SensorValue{},
	&binlogpb.AttributeContext{}, &errdetails.BadRequest{}, &rpcstatus.Status{}, &grpcbinlog.GrpcLogEntry{},
	&channelzpb.Channel{}, &healthpb.HealthCheckRequest{}, &testgrpc.SimpleRequest{}, &testcore.Bucket{},
	&reflectionpb.ServerReflectionRequest{}, &descriptorpb.FileDescriptorProto{}, &gofeaturespb.GoFeatures{},
	&anypb.Any{}, &apipb.Api{}, &durationpb.Duration{}, &emptypb.Empty{}, &fieldmaskpb.FieldMask{},
	&sourcecontextpb.SourceContext{}, &structpb.Struct{}, &timestamppb.Timestamp{}, &typepb.Type{},
	&wrapperspb.StringValue{}, &pluginpb.CodeGeneratorRequest{},
}

const badUTF8Text = "ok\xffno"

// randomFiller fills messages at random with the values where an encoder
// is easy to get wrong.
type randomFiller struct {
	r       *rand.Rand
	invalid bool // strings may be invalid UTF-8
	skipReq bool // required fields may be left unset
}

func (f *randomFiller) str() string {
	switch f.r.Intn(6) {
	case 0:
		return ""
	case 1:
		return "a"
	case 2:
		return strings.Repeat("é", 70)
	case 3:
		if f.invalid {
			return badUTF8Text
		}
		return "ok"
	case 4:
		return strings.Repeat("x", 200)
	}
	return "日本"
}

func (f *randomFiller) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	pick := func(vs ...int64) int64 { return vs[f.r.Intn(len(vs))] }
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(f.r.Intn(2) == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if vals.Len() > 0 && f.r.Intn(3) > 0 {
			return protoreflect.ValueOfEnum(vals.Get(f.r.Intn(vals.Len())).Number())
		}
		if fd.Enum().IsClosed() {
			return protoreflect.ValueOfEnum(fd.Enum().Values().Get(0).Number())
		}
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(pick(-5, 0, 1000, math.MinInt32)))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(pick(0, 1, -1, 127, 128, math.MaxInt32, math.MinInt32)))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(pick(0, 1, -1, 1<<35, math.MaxInt64, math.MinInt64))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(pick(0, 1, 128, math.MaxUint32)))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 1, 1 << 40, math.MaxUint64}[f.r.Intn(4)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), 1.5}[f.r.Intn(4)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, math.Copysign(0, -1), math.Inf(1), 2.5}[f.r.Intn(4)])
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(f.str())
	case protoreflect.BytesKind:
		switch f.r.Intn(3) {
		case 0:
			return protoreflect.ValueOfBytes([]byte{})
		case 1:
			return protoreflect.ValueOfBytes([]byte("bytes\xff"))
		}
		return protoreflect.ValueOfBytes(bytes.Repeat([]byte{7}, 150))
	}
	panic("kind " + fd.Kind().String())
}

func (f *randomFiller) fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required {
			if f.skipReq && f.r.Intn(3) == 0 {
				continue
			}
		} else if f.r.Intn(3) == 0 {
			continue
		}
		if fd.Message() != nil && depth > 2 && !fd.IsMap() {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range f.r.Intn(3) {
				k := f.scalar(fd.MapKey()).MapKey()
				if fd.MapValue().Message() != nil {
					if depth > 2 {
						break
					}
					v := mp.NewValue()
					f.fill(v.Message(), depth+1)
					mp.Set(k, v)
				} else {
					mp.Set(k, f.scalar(fd.MapValue()))
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range f.r.Intn(3) {
				if fd.Message() != nil {
					v := l.NewElement()
					f.fill(v.Message(), depth+1)
					l.Append(v)
				} else {
					l.Append(f.scalar(fd))
				}
			}
		case fd.Message() != nil:
			v := m.NewField(fd)
			f.fill(v.Message(), depth+1)
			m.Set(fd, v)
		default:
			m.Set(fd, f.scalar(fd))
		}
	}
	if f.r.Intn(3) == 0 {
		b := protowire.AppendTag(nil, 1999, protowire.BytesType)
		b = protowire.AppendBytes(b, []byte("unknown"))
		m.SetUnknown(b)
	}
}

// linkedMessageTypes returns every generated message type linked in, but
// map entries.
func linkedMessageTypes() []protoreflect.MessageType {
	_ = linkedZoo
	var out []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if !mt.Descriptor().IsMapEntry() {
			out = append(out, mt)
		}
		return true
	})
	return out
}

// TestMeasureAllTypes fills every message type linked in
// (known types, descriptorpb, typepb/apipb, grpc interop, channelz,
// binarylog, reflection, errdetails, protoc-gen-validate's proto2
// messages with extensions, the module's own) at random, as generated
// messages and as dynamicpb ones, and checks that measure, and
// measureKnown once the plan is kept, refuse exactly what proto.Marshal
// refuses (invalid UTF-8, unset required fields) and otherwise return
// len(proto.Marshal(m)).
func TestMeasureAllTypes(t *testing.T) {
	types := linkedMessageTypes()
	if len(types) < 200 {
		t.Fatalf("only %d message types linked in", len(types))
	}
	r := rand.New(rand.NewSource(1))
	bad := 0
	for _, mt := range types {
		for round := range 12 {
			f := &randomFiller{r: r, invalid: round%3 == 1, skipReq: round%3 == 2}
			m := mt.New()
			f.fill(m, 0)
			for _, pm := range []proto.Message{m.Interface(), asDynamic(t, m.Interface())} {
				want, wantErr := proto.Marshal(pm)
				var last atomic.Pointer[strategy]
				n, err := measure(pm, &last)
				if (err != nil) != (wantErr != nil) || err == nil && n != len(want) {
					bad++
					if bad < 20 {
						t.Errorf("%T %v: measure = %d, %v; proto.Marshal gives %d bytes, %v", pm, mt.Descriptor().FullName(), n, err, len(want), wantErr)
					}
					continue
				}
				n2, err2, ok := measureKnown(pm, &last)
				if ok && ((err2 != nil) != (wantErr != nil) || err2 == nil && n2 != len(want)) {
					bad++
					if bad < 20 {
						t.Errorf("%T %v: measureKnown = %d, %v; proto.Marshal gives %d bytes, %v", pm, mt.Descriptor().FullName(), n2, err2, len(want), wantErr)
					}
				}
			}
		}
	}
}

// asDynamic returns m as a dynamic message of its descriptor.
func asDynamic(t *testing.T, m proto.Message) proto.Message {
	t.Helper()
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
	if err != nil {
		// Invalid UTF-8: copy through reflection instead.
		d := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
		proto.Merge(d, m)
		return d
	}
	d := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
	if err := (proto.UnmarshalOptions{AllowPartial: true, Resolver: protoregistry.GlobalTypes}).Unmarshal(b, d); err != nil {
		d = dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
		proto.Merge(d, m)
	}
	return d
}

// TestCloneAllTypes: for every message type the plans clone
// (cloneKnown, copyKnown), the copy must equal the original and must not
// change when the sender then changes, in place, every bytes field, list
// element and unknown field of its message, as a sender reusing its
// message may right after SendMsg returns.
func TestCloneAllTypes(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	cloned := 0
	for _, mt := range linkedMessageTypes() {
		for range 6 {
			m := mt.New()
			(&randomFiller{r: r}).fill(m, 0)
			pm := m.Interface()
			var last atomic.Pointer[strategy]
			if _, err := measure(pm, &last); err != nil {
				continue
			}
			want, _ := proto.MarshalOptions{Deterministic: true}.Marshal(pm)
			c, ok := cloneKnown(pm, &last)
			if !ok {
				continue
			}
			cloned++
			dst := mt.New().Interface()
			(&randomFiller{r: r}).fill(dst.ProtoReflect(), 0)
			if !copyKnown(dst, pm, &last) {
				t.Errorf("%v: cloneKnown but no copyKnown", mt.Descriptor().FullName())
			}
			scribbleInPlace(m)
			for what, got := range map[string]proto.Message{"cloneKnown": c.(proto.Message), "copyKnown": dst} {
				b, err := proto.MarshalOptions{Deterministic: true}.Marshal(got)
				if err != nil || !bytes.Equal(b, want) {
					t.Errorf("%v: %s's copy changed with the original (err %v):\n got %q\nwant %q", mt.Descriptor().FullName(), what, err, b, want)
				}
			}
		}
	}
	if cloned < 20 {
		t.Errorf("only %d messages cloned by plan", cloned)
	}
}

// scribbleInPlace changes m in place: every byte of its bytes fields and
// unknown fields, every element of its lists.
func scribbleInPlace(m protoreflect.Message) {
	for i := range m.GetUnknown() {
		m.GetUnknown()[i] = 'X'
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				if fd.Kind() == protoreflect.BytesKind {
					for k := range l.Get(j).Bytes() {
						l.Get(j).Bytes()[k] = 'X'
					}
				} else if fd.Kind() == protoreflect.StringKind {
					l.Set(j, protoreflect.ValueOfString("scribbled"))
				}
			}
		case fd.Kind() == protoreflect.BytesKind && !fd.IsMap():
			for k := range v.Bytes() {
				v.Bytes()[k] = 'X'
			}
		}
		return true
	})
}

// TestTypeWordConfusion: the plan kept for one type must not be
// used for another, whatever order types come in: measureKnown,
// cloneKnown, copyKnown and shallowCopy of a message of another type than
// the kept plan's must decline (or be right).
func TestTypeWordConfusion(t *testing.T) {
	a := &echov1.EchoRequest{Text: "aaaa"}
	b := &wrapperspb.StringValue{Value: "bbbbbbbbbbbbbbbbb"}
	c := &testgrpc.Payload{Body: []byte("ccc")}
	var last atomic.Pointer[strategy]
	for i := range 30 {
		m := []proto.Message{a, b, c}[i%3]
		other := []proto.Message{a, b, c}[(i+1)%3]
		if _, err := measure(m, &last); err != nil {
			t.Fatal(err)
		}
		if n, err, ok := measureKnown(other, &last); ok && (err != nil || n != proto.Size(other)) {
			t.Errorf("measureKnown(%T) after %T = %d, %v; want %d", other, m, n, err, proto.Size(other))
		}
		if cl, ok := cloneKnown(other, &last); ok && !proto.Equal(cl.(proto.Message), other) {
			t.Errorf("cloneKnown(%T) after %T = %v", other, m, cl)
		}
		dst := other.ProtoReflect().New().Interface()
		if copyKnown(dst, other, &last) && !proto.Equal(dst, other) {
			t.Errorf("copyKnown(%T) after %T = %v", other, m, dst)
		}
		if copyKnown(dst, m, &last) {
			t.Errorf("copyKnown(%T ← %T) copied across types", dst, m)
		}
		dst2 := other.ProtoReflect().New().Interface()
		if shallowCopy(dst2, m, &last) {
			t.Errorf("shallowCopy(%T ← %T) copied across types", dst2, m)
		}
		if reflect.TypeOf(m) == reflect.TypeOf(other) {
			t.Fatal("test error")
		}
	}
}
