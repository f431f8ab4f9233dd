package handover

import (
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// legacyNote is a legacy message, as older generators made them: no
// ProtoReflect, no coding methods, so protobuf-go wraps it by reflection.
type legacyNote struct {
	Text             string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	XXX_unrecognized []byte
	XXX_sizecache    int32
}

func (m *legacyNote) Reset()         { *m = legacyNote{} }
func (m *legacyNote) String() string { return m.Text }
func (*legacyNote) ProtoMessage()    {}

// selfNote is legacyNote as gogoproto makes it: it codes itself.
type selfNote struct {
	Text             string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	XXX_unrecognized []byte
	XXX_sizecache    int32
}

func (m *selfNote) Reset()         { *m = selfNote{} }
func (m *selfNote) String() string { return m.Text }
func (*selfNote) ProtoMessage()    {}
func (m *selfNote) Size() int      { return len(m.marshal()) }

func (m *selfNote) Marshal() ([]byte, error) { return m.marshal(), nil }

func (m *selfNote) marshal() []byte {
	var b []byte
	if m.Text != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), m.Text)
	}
	return append(b, m.XXX_unrecognized...)
}

func (m *selfNote) Unmarshal(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New("selfNote: bad tag")
		}
		k := protowire.ConsumeFieldValue(num, typ, b[n:])
		if k < 0 {
			return errors.New("selfNote: bad field")
		}
		if num == 1 && typ == protowire.BytesType {
			m.Text, _ = protowire.ConsumeString(b[n:])
		} else {
			m.XXX_unrecognized = append(m.XXX_unrecognized, b[:n+k]...)
		}
		b = b[n+k:]
	}
	return nil
}

// marshalOnlyNote has a Marshal of its own and nothing else of a
// selfCoder's: protobuf encodes it by that Marshal.
type marshalOnlyNote struct {
	Text string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
}

func (m *marshalOnlyNote) Reset()                   { *m = marshalOnlyNote{} }
func (m *marshalOnlyNote) String() string           { return m.Text }
func (*marshalOnlyNote) ProtoMessage()              {}
func (m *marshalOnlyNote) Marshal() ([]byte, error) { return nil, nil }

// funcName is the name of f, a send function, without its package.
func funcName(f sendFunc) string {
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	return name[strings.LastIndex(name, ".")+1:]
}

// strategyOfNew returns the strategy of m as a fresh Slot finds it.
func strategyOfNew(m any) (*strategy, addr) {
	return strategyOf(m, new(atomic.Pointer[strategy]))
}

func TestStrategyChosenOncePerType(t *testing.T) {
	dyn := dynamicpb.NewMessage((&echov1.EchoRequest{}).ProtoReflect().Descriptor())
	for _, c := range []struct {
		m            any
		name         string
		clone, share string
		byType       bool
	}{
		{&echov1.EchoRequest{}, "flat", "cloneFlat", "shareFlat", true},
		{&vtclone.Rich{}, "checked", "cloneFast", "shareChecked", true},
		{&structpb.Struct{}, "checked", "sendViaWire", "shareChecked", true},
		{&opaque.Node{}, "wire", "sendViaWire", "sendViaWire", true}, // lazy fields
		{dyn, "wire", "sendViaWire", "sendViaWire", false},
		{protoadapt.MessageV1(&legacyNote{}), "checked", "sendViaWire", "shareChecked", true},
		{protoadapt.MessageV1(&selfNote{}), "self-coding", "cloneSelfCoding", "shareSelfCoding", true},
		{protoadapt.MessageV1(&marshalOnlyNote{}), "wire", "sendViaWire", "sendViaWire", true},
		{(*echov1.EchoRequest)(nil), "typed nil", "sendTypedNil", "sendTypedNil", false},
	} {
		s, _ := strategyOfNew(c.m)
		if s == nil {
			t.Errorf("%T: no strategy", c.m)
			continue
		}
		if s.name != c.name || funcName(s.sends[Clone]) != c.clone || funcName(s.sends[Share]) != c.share || s.byType != c.byType {
			t.Errorf("%T: %s (clone %s, share %s, by type %v); want %s (%s, %s, %v)", c.m, s.name,
				funcName(s.sends[Clone]), funcName(s.sends[Share]), s.byType, c.name, c.clone, c.share, c.byType)
		}
	}
	if s, _ := strategyOfNew("not a message"); s != nil {
		t.Errorf("a string has strategy %s; want none (the codec's)", s.name)
	}
	// A type's strategy is made once: the next Slot finds the same one.
	a, _ := strategyOfNew(&echov1.EchoRequest{})
	b, _ := strategyOfNew(&echov1.EchoRequest{})
	if a != b {
		t.Error("two Slots made two strategies of one type")
	}
}

var unlimited = Limits{MaxSend: math.MaxInt32, MaxRecv: math.MaxInt32}

// sendAlone calls f, as m's strategy would, with no receiver's message.
func sendAlone(t *testing.T, f sendFunc, m any) (any, int) {
	t.Helper()
	s, at := strategyOfNew(m)
	v, n, err := f(s, m, at, unlimited, nil)
	if err != nil {
		t.Fatalf("%s(%T): %v", funcName(f), m, err)
	}
	return v, n
}

// isWire reports whether v is a wire encoding that decodes to a message
// equal to want.
func isWire(t *testing.T, v any, want proto.Message) bool {
	t.Helper()
	w, ok := v.(*wire)
	if !ok {
		return false
	}
	got := want.ProtoReflect().New().Interface()
	if err := w.decode(got); err != nil {
		t.Fatalf("decoding the wire: %v", err)
	}
	return proto.Equal(got, want)
}

func TestSendFuncsAlone(t *testing.T) {
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7)
	withUnknown := func(m proto.Message) proto.Message {
		m.ProtoReflect().SetUnknown(unknown)
		return m
	}
	t.Run("shareFlat", func(t *testing.T) {
		m := &echov1.EchoRequest{Text: "hi"}
		if v, n := sendAlone(t, shareFlat, m); v != any(m) || n != proto.Size(m) {
			t.Errorf("gave %v (%d bytes); want the message itself, %d bytes", v, n, proto.Size(m))
		}
		u := withUnknown(&echov1.EchoRequest{Text: "hi"})
		if v, _ := sendAlone(t, shareFlat, u); !isWire(t, v, u) {
			t.Errorf("with unknown fields: gave %T; want the wire", v)
		}
	})
	t.Run("cloneFlat", func(t *testing.T) {
		m := &echov1.EchoRequest{Text: "hi"}
		v, n := sendAlone(t, cloneFlat, m)
		if c, ok := v.(*echov1.EchoRequest); !ok || c == m || !proto.Equal(c, m) || n != proto.Size(m) {
			t.Errorf("gave %v (%d bytes); want a copy of %v", v, n, m)
		}
		s, at := strategyOfNew(m)
		into := &echov1.EchoRequest{}
		if v, _, err := cloneFlat(s, m, at, unlimited, dataWord(into)); err != nil || v != delivered || !proto.Equal(into, m) {
			t.Errorf("into the receiver's message: %v, %v, %v; want delivered, %v", v, err, into, m)
		}
		u := withUnknown(&echov1.EchoRequest{Text: "hi"})
		if v, _ := sendAlone(t, cloneFlat, u); !isWire(t, v, u) {
			t.Errorf("with unknown fields: gave %T; want the wire", v)
		}
	})
	t.Run("shareChecked", func(t *testing.T) {
		m := &vtclone.Rich{S: "s", Kv: map[string]string{"k": "v"}, Leaves: []*vtclone.Leaf{{S: "l"}}}
		if v, n := sendAlone(t, shareChecked, m); v != any(m) || n != proto.Size(m) {
			t.Errorf("gave %v (%d bytes); want the message itself, %d bytes", v, n, proto.Size(m))
		}
		nested := &vtclone.Rich{Leaves: []*vtclone.Leaf{withUnknown(&vtclone.Leaf{S: "l"}).(*vtclone.Leaf)}}
		if v, _ := sendAlone(t, shareChecked, nested); !isWire(t, v, nested) {
			t.Errorf("with unknown fields nested: gave %T; want the wire", v)
		}
	})
	t.Run("cloneFast", func(t *testing.T) {
		m := &vtclone.Rich{S: "s", Kv: map[string]string{"k": "v"}, Leaves: []*vtclone.Leaf{{S: "l"}}}
		v, _ := sendAlone(t, cloneFast, m)
		if c, ok := v.(*vtclone.Rich); !ok || c == m || c.Leaves[0] == m.Leaves[0] || !proto.Equal(c, m) {
			t.Errorf("gave %v; want a deep copy of %v", v, m)
		}
		nested := &vtclone.Rich{Leaves: []*vtclone.Leaf{withUnknown(&vtclone.Leaf{S: "l"}).(*vtclone.Leaf)}}
		if v, _ := sendAlone(t, cloneFast, nested); !isWire(t, v, nested) {
			t.Errorf("with unknown fields nested: gave %T; want the wire", v)
		}
	})
	t.Run("self-coding", func(t *testing.T) {
		m := &selfNote{Text: "hi"}
		if v, n := sendAlone(t, shareSelfCoding, m); v != any(m) || n != m.Size() {
			t.Errorf("share gave %v (%d bytes); want the message itself, %d bytes", v, n, m.Size())
		}
		v, n := sendAlone(t, cloneSelfCoding, m)
		got := &selfNote{}
		if w, ok := v.(*wire); !ok || n != m.Size() || w.decode(got) != nil || got.Text != "hi" {
			t.Errorf("clone gave %v (%d bytes); want its own encoding, %d bytes", v, n, m.Size())
		}
		u := &selfNote{Text: "hi", XXX_unrecognized: unknown}
		if v, _ := sendAlone(t, shareSelfCoding, u); !isWire(t, v, protoadapt.MessageV2Of(u)) {
			t.Errorf("with unknown fields: gave %T; want the wire", v)
		}
	})
	t.Run("sendViaWire", func(t *testing.T) {
		m := &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewBoolValue(true)}}
		if v, _ := sendAlone(t, sendViaWire, m); !isWire(t, v, m) {
			t.Errorf("gave %T; want the wire", v)
		}
	})
	t.Run("sendTypedNil", func(t *testing.T) {
		v, n := sendAlone(t, sendTypedNil, (*echov1.EchoRequest)(nil))
		if w, ok := v.(*wire); !ok || len(w.b) != 0 || n != 0 {
			t.Errorf("gave %v (%d bytes); want an empty encoding", v, n)
		}
	})
}
