package handover

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// TestSizeWalksChosen: a plan of one string or one list of strings
// measures and copies by walks of its own, any other by the loops over
// fields; the tests below, and TestCloneKnown, hold each walk to protobuf.
func TestSizeWalksChosen(t *testing.T) {
	for _, c := range []struct {
		m    proto.Message
		walk func(*sizePlan, addr, int) (int, bool, error)
		copy func(*sizePlan, addr)
	}{
		{&echov1.EchoRequest{}, (*sizePlan).sizeOneString, (*sizePlan).copyUnknown},
		{&listv1.ListResponse{}, (*sizePlan).sizeOneStringList, (*sizePlan).copyOneStringList},
		{&fieldmaskpb.FieldMask{}, (*sizePlan).sizeOneStringList, (*sizePlan).copyOneStringList},
		{&testgrpc.Payload{}, (*sizePlan).sizeFields, (*sizePlan).copyEachField},
		{&testgrpc.StreamingOutputCallResponse{}, (*sizePlan).sizeFields, (*sizePlan).copyEachField},
	} {
		p := planOf(t, c.m)
		if got, want := walkName(p.walk), walkName(c.walk); got != want {
			t.Errorf("%T: walk %s, want %s", c.m, got, want)
		}
		if got, want := walkName(p.copyFields), walkName(c.copy); got != want {
			t.Errorf("%T: copy %s, want %s", c.m, got, want)
		}
	}
}

// walkName names f, a walk, in a failure.
func walkName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

// planOf returns the size plan of m's type, which must have one.
func planOf(t *testing.T, m proto.Message) *sizePlan {
	t.Helper()
	p := buildSizePlan(reflect.TypeOf(m).Elem(), m.ProtoReflect().Descriptor())
	if p == nil {
		t.Fatalf("%T: no size plan", m)
	}
	return p
}

// oddStrings are strings at the edges of the walks' paths: every length
// around shortASCIIMax and where length prefixes grow a byte (128 and
// 16384), each ASCII, with a valid multi-byte rune, and with a byte that
// is not UTF-8, at its start, middle and end.
func oddStrings() []string {
	var ss []string
	for _, n := range []int{1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 18, 31, 100, 127, 128, 300, 16383, 16384} {
		ascii := strings.Repeat("x", n)
		ss = append(ss, ascii)
		for _, pos := range []int{0, n / 2, n - 1} {
			for _, odd := range []string{"é", "\xff", "\xc3", "\xed\xa0\x80"} {
				if pos+len(odd) <= n {
					ss = append(ss, ascii[:pos]+odd+ascii[pos+len(odd):])
				}
			}
		}
	}
	return ss
}

// checkSize holds p's size of m to proto.Size, and its refusal to
// proto.Marshal's.
func checkSize(t *testing.T, p *sizePlan, m proto.Message) {
	t.Helper()
	n, wire, err := p.size(reflect.ValueOf(m).UnsafePointer())
	_, merr := proto.Marshal(m)
	switch {
	case wire:
		t.Fatalf("%T %q: the wire, want a size", m, m)
	case (err != nil) != (merr != nil):
		t.Fatalf("%T %q: error %v; proto.Marshal says %v", m, m, err, merr)
	case err != nil && !errors.Is(err, errInvalidUTF8):
		t.Fatalf("%T %q: error %v, want errInvalidUTF8", m, m, err)
	case err == nil && n != proto.Size(m):
		t.Fatalf("%T %q: size %d; proto.Size says %d", m, m, n, proto.Size(m))
	}
}

// TestSizeOneStringAsMarshal: the walk of a one-string message measures
// and refuses every odd string as protobuf does, with and without unknown
// fields.
func TestSizeOneStringAsMarshal(t *testing.T) {
	p := planOf(t, &echov1.EchoRequest{})
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1)
	checkSize(t, p, &echov1.EchoRequest{})
	for _, s := range oddStrings() {
		checkSize(t, p, &echov1.EchoRequest{Text: s})
		m := &echov1.EchoRequest{Text: s}
		m.ProtoReflect().SetUnknown(unknown)
		checkSize(t, p, m)
	}
}

// TestSizeOneStringListAsMarshal: the walk of a one-list message measures
// and refuses as protobuf does lists of one to four strings, with each
// odd string at each index among ASCII ones (and among a valid
// multi-byte one), with and without unknown fields.
func TestSizeOneStringListAsMarshal(t *testing.T) {
	p := planOf(t, &listv1.ListResponse{})
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1)
	checkSize(t, p, &listv1.ListResponse{})
	checkSize(t, p, &listv1.ListResponse{Strings: []string{}})
	for _, s := range oddStrings() {
		for size := 1; size <= 4; size++ {
			for at := range size {
				for _, other := range []string{"abc", "", "日本"} {
					ss := make([]string, size)
					for i := range ss {
						ss[i] = other
					}
					ss[at] = s
					checkSize(t, p, &listv1.ListResponse{Strings: ss})
					m := &listv1.ListResponse{Strings: ss}
					m.ProtoReflect().SetUnknown(unknown)
					checkSize(t, p, m)
				}
			}
		}
	}
}

// TestSizeWalksNested: a message measured as nested (depth 1) needs the
// wire when it holds unknown fields, which a socket's receiver would
// parse, and not otherwise; a string that is not UTF-8 is refused first.
func TestSizeWalksNested(t *testing.T) {
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1)
	withUnknown := func(m proto.Message) proto.Message {
		m.ProtoReflect().SetUnknown(unknown)
		return m
	}
	for _, c := range []struct {
		m         proto.Message
		wire, bad bool
	}{
		{&echov1.EchoRequest{Text: "ok"}, false, false},
		{&echov1.EchoRequest{}, false, false},
		{withUnknown(&echov1.EchoRequest{Text: "ok"}), true, false},
		{withUnknown(&echov1.EchoRequest{}), true, false},
		{withUnknown(&echov1.EchoRequest{Text: "\xff"}), false, true},
		{&listv1.ListResponse{Strings: []string{"a"}}, false, false},
		{withUnknown(&listv1.ListResponse{Strings: []string{"a"}}), true, false},
		{withUnknown(&listv1.ListResponse{Strings: []string{"a", "\xff"}}), false, true},
		{&testgrpc.Payload{Body: []byte("b")}, false, false},
		{withUnknown(&testgrpc.Payload{Body: []byte("b")}), true, false},
	} {
		p := planOf(t, c.m)
		n, wire, err := p.sizeAt(reflect.ValueOf(c.m).UnsafePointer(), 1)
		switch {
		case c.bad && !errors.Is(err, errInvalidUTF8):
			t.Errorf("%T %q nested: wire %v, error %v; want errInvalidUTF8", c.m, c.m, wire, err)
		case !c.bad && (err != nil || wire != c.wire):
			t.Errorf("%T %q nested: wire %v, error %v; want wire %v", c.m, c.m, wire, err, c.wire)
		case !c.bad && !c.wire && n != proto.Size(c.m):
			t.Errorf("%T %q nested: size %d; proto.Size says %d", c.m, c.m, n, proto.Size(c.m))
		}
	}
}

// TestSizeWalksUncheckedStrings: with a field that need not be UTF-8 (a
// proto2 string's, here the plans' flag turned off), the walks refuse no
// string and measure each as protobuf does.
func TestSizeWalksUncheckedStrings(t *testing.T) {
	unchecked := func(m proto.Message) *sizePlan {
		p := *planOf(t, m)
		p.fields = append([]sizeField(nil), p.fields...)
		p.fields[0].utf8 = false
		return &p
	}
	one, list := unchecked(&echov1.EchoRequest{}), unchecked(&listv1.ListResponse{})
	for _, s := range oddStrings() {
		m := &echov1.EchoRequest{Text: s}
		if n, wire, err := one.size(reflect.ValueOf(m).UnsafePointer()); err != nil || wire || n != len(s)+1+protowire.SizeVarint(uint64(len(s))) {
			t.Fatalf("%q unchecked: %d, %v, %v", s, n, wire, err)
		}
		l := &listv1.ListResponse{Strings: []string{"a", s}}
		if n, wire, err := list.size(reflect.ValueOf(l).UnsafePointer()); err != nil || wire || n != 3+len(s)+1+protowire.SizeVarint(uint64(len(s))) {
			t.Fatalf("[a %q] unchecked: %d, %v, %v", s, n, wire, err)
		}
	}
}
