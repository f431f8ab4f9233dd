package handover

import (
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
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
		&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: []byte("nested")}},
		&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{}}, &testgrpc.StreamingOutputCallResponse{},
		&bookstorev1.ListBooksResponse{Books: []*bookstorev1.Book{{Title: long, PublicationYear: -1}, {}}},
		&bookstorev1.ListBooksResponse{Books: []*bookstorev1.Book{}},
	}
	for _, m := range planned {
		tp := newStrategy(m, reflect.TypeOf(m), m.ProtoReflect().Descriptor())
		if tp.sizer == nil || !tp.byType || tp.initCheck {
			t.Errorf("%T: no size plan (%v), or not by type (%v), or an init check (%v)", m, tp.sizer != nil, tp.byType, tp.initCheck)
			continue
		}
		if n, wire, err := tp.measure(m, reflect.ValueOf(m).UnsafePointer()); err != nil || wire || n != proto.Size(m) {
			t.Errorf("%T %v: measured %d, %v, wire %v; proto.Size says %d", m, m, n, err, wire, proto.Size(m))
		}
	}
	// What a socket's receiver parses or refuses, the wire must carry.
	for _, m := range []proto.Message{
		&testgrpc.StreamingOutputCallResponse{Payload: withUnknown(&testgrpc.Payload{}).(*testgrpc.Payload)},
		&bookstorev1.ListBooksResponse{Books: []*bookstorev1.Book{{}, withUnknown(&bookstorev1.Book{}).(*bookstorev1.Book)}},
		&bookstorev1.ListBooksResponse{Books: []*bookstorev1.Book{{}, nil}},
	} {
		tp := newStrategy(m, reflect.TypeOf(m), m.ProtoReflect().Descriptor())
		if _, wire, err := tp.measure(m, reflect.ValueOf(m).UnsafePointer()); err != nil || !wire {
			t.Errorf("%T %v: wire %v, %v; want the wire", m, m, wire, err)
		}
	}
	unplanned := []proto.Message{
		&testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("nested")}},        // a map, deep inside
		structpb.NewStringValue("oneof"),                                                   // a oneof
		&structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewNullValue()}}, // a map
	}
	for _, m := range unplanned {
		var last atomic.Pointer[strategy]
		if n, err := measure(m, &last); err != nil || n != proto.Size(m) {
			t.Errorf("%T: measured %d, %v; proto.Size says %d", m, n, err, proto.Size(m))
		}
		if tp := last.Load(); tp.sizer != nil {
			t.Errorf("%T has a size plan", m)
		}
	}
}

// TestCloneKnown checks the deep copy of messages the plans know every
// field of: equal to the original, and unchanged when the sender then
// changes its message's bytes, lists and unknown fields in place, as a
// sender that reuses its message does; through cloneKnown and through
// copyKnown into a message that held something else.
func TestCloneKnown(t *testing.T) {
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 300)
	msgs := []proto.Message{
		&listv1.ListResponse{Strings: []string{"a", "b"}},
		wrapperspb.Bytes([]byte("bytes")),
		&testgrpc.Payload{Type: testgrpc.PayloadType_COMPRESSABLE, Body: []byte("body")},
		&fieldmaskpb.FieldMask{Paths: []string{"x.y"}},
		&echov1.EchoRequest{Text: "t"},
	}
	for _, m := range msgs {
		m.ProtoReflect().SetUnknown(append([]byte(nil), unknown...))
		var last atomic.Pointer[strategy]
		if _, err := measure(m, &last); err != nil {
			t.Fatal(err)
		}
		want := proto.Clone(m)
		c, ok := cloneKnown(m, &last)
		if !ok {
			t.Errorf("%T: no clone from the plans", m)
			continue
		}
		other := m.ProtoReflect().New().Interface()
		other.ProtoReflect().SetUnknown([]byte{1, 2, 3})
		if !copyKnown(other, m, &last) {
			t.Errorf("%T: no copy from the plans", m)
		}
		// The sender changes its message in place.
		for _, b := range [][]byte{m.ProtoReflect().GetUnknown(), bytesOf(m)} {
			for i := range b {
				b[i] = 'X'
			}
		}
		if l, ok := m.(*listv1.ListResponse); ok {
			l.Strings[0] = "changed"
		}
		if f, ok := m.(*fieldmaskpb.FieldMask); ok {
			f.Paths[0] = "changed"
		}
		for _, got := range []proto.Message{c.(proto.Message), other} {
			if !proto.Equal(got, want) {
				t.Errorf("%T: the copy became %v, want %v", m, got, want)
			}
		}
	}
}

// TestCloneEmptyComesOutNil: an empty list, bytes or unknown fields, nil
// or not, comes out of a deep copy nil, as from proto.Clone or a socket,
// whether the copy is new or one that held something of each.
func TestCloneEmptyComesOutNil(t *testing.T) {
	type fields struct {
		strings []string
		body    []byte
		books   []*bookstorev1.Book
	}
	for _, empty := range []bool{false, true} {
		list := &listv1.ListResponse{}
		payload := &testgrpc.Payload{Type: testgrpc.PayloadType_COMPRESSABLE}
		books := &bookstorev1.ListBooksResponse{}
		if empty {
			list.Strings, payload.Body, books.Books = []string{}, []byte{}, []*bookstorev1.Book{}
			for _, m := range []proto.Message{list, payload, books} {
				m.ProtoReflect().SetUnknown([]byte{})
			}
		}
		full := []proto.Message{
			&listv1.ListResponse{Strings: []string{"old"}},
			&testgrpc.Payload{Body: []byte("old")},
			&bookstorev1.ListBooksResponse{Books: []*bookstorev1.Book{{Title: "old"}}},
		}
		for i, m := range []proto.Message{list, payload, books} {
			var last atomic.Pointer[strategy]
			if _, err := measure(m, &last); err != nil {
				t.Fatal(err)
			}
			c, ok := cloneKnown(m, &last)
			if !ok {
				t.Fatalf("%T: no clone from the plans", m)
			}
			into := full[i]
			into.ProtoReflect().SetUnknown([]byte{1})
			if !copyKnown(into, m, &last) {
				t.Fatalf("%T: no copy from the plans", m)
			}
			for _, got := range []proto.Message{c.(proto.Message), into} {
				var f fields
				switch got := got.(type) {
				case *listv1.ListResponse:
					f.strings = got.Strings
				case *testgrpc.Payload:
					f.body = got.Body
				case *bookstorev1.ListBooksResponse:
					f.books = got.Books
				}
				if f.strings != nil || f.body != nil || f.books != nil || got.ProtoReflect().GetUnknown() != nil {
					t.Errorf("%T of an empty message (empty, not nil: %v): a field is not nil: %+v, unknown %v", got, empty, f, got.ProtoReflect().GetUnknown())
				}
			}
		}
	}
}

// bytesOf returns the bytes field of m, if it has one of the test's.
func bytesOf(m proto.Message) []byte {
	switch m := m.(type) {
	case *wrapperspb.BytesValue:
		return m.Value
	case *testgrpc.Payload:
		return m.Body
	}
	return nil
}
