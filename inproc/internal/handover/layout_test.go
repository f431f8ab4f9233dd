package handover

import (
	"reflect"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/runtime/protoimpl"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestLayoutAssumptions pins each assumption layout.go makes of generated
// structs against the code protoc-gen-go makes today, in every API: a
// protobuf-go release that changes one fails here.
func TestLayoutAssumptions(t *testing.T) {
	generated := []proto.Message{
		&open3.Leaf{}, &open3.Tree{}, &proto2.Record{}, &proto2.Record_Grp{},
		&editions.Node{}, &editions.Holder{}, &opaque.Node{}, &opaque.Holder{}, &hybrid.Node{}, &hybrid.Holder{},
	}
	for _, m := range generated {
		st := reflect.TypeOf(m).Elem()
		t.Run(st.String(), func(t *testing.T) {
			if !isGenerated(st) {
				t.Error("not recognised as generated")
			}
			caches := 0
			for i := range st.NumField() {
				if isSizeCache(st.Field(i)) {
					caches++
				}
			}
			if caches != 1 {
				t.Errorf("%d size caches found, want 1", caches)
			}
			// Unknown fields set through reflection are where the plans
			// read them.
			off, ok := unknownField(st)
			if !ok {
				t.Fatal("no unknown fields found")
			}
			unknown := protowire.AppendVarint(protowire.AppendTag(nil, 1000, protowire.VarintType), 7)
			m := m.ProtoReflect().New().Interface()
			m.ProtoReflect().SetUnknown(unknown)
			if got := bytesAt(dataWord(m), off); string(got) != string(unknown) {
				t.Errorf("unknown fields at the offset found: %x, set %x", got, unknown)
			}
		})
	}
	t.Run("lazy", func(t *testing.T) {
		for m, want := range map[proto.Message]bool{&opaque.Node{}: true, &opaque.Holder{}: false, &open3.Tree{}: false, &hybrid.Holder{}: false} {
			if got := hasLazyFields(reflect.TypeOf(m).Elem()); got != want {
				t.Errorf("%T: hasLazyFields = %v, want %v", m, got, want)
			}
		}
		// A lazy field is decoded by its getter, after Unmarshal left it nil.
		b, err := proto.Marshal(opaque.Node_builder{Child: opaque.Node_builder{Label: proto.String("c")}.Build()}.Build())
		if err != nil {
			t.Fatal(err)
		}
		n := &opaque.Node{}
		if err := proto.Unmarshal(b, n); err != nil {
			t.Fatal(err)
		}
		if f := reflect.ValueOf(n).Elem().FieldByName("xxx_hidden_Child"); !f.IsNil() {
			t.Error("a lazy field was decoded eagerly: the lazy-field tests test nothing")
		}
	})
	t.Run("extensions", func(t *testing.T) {
		st := reflect.TypeFor[proto2.Record]()
		off, ok := extensionsField(st)
		if !ok {
			t.Fatal("no extension map found")
		}
		r := &proto2.Record{}
		proto.SetExtension(r, proto2.E_Note, "n")
		if n := reflect.NewAt(st.FieldByIndex([]int{fieldIndex(st, off)}).Type, addr(field[byte](dataWord(r), off))).Elem().Len(); n != 1 {
			t.Errorf("SetExtension left %d entries in the map found, want 1", n)
		}
	})
	t.Run("receivers-own", func(t *testing.T) {
		p := shallowPlanFor(reflect.TypeFor[opaque.Holder]())
		if len(p.boxes) != 2 {
			t.Errorf("opaque Holder: %d fields behind a pointer to a slice, want 2 (kids, more)", len(p.boxes))
		}
		if _, ok := reflect.TypeFor[opaque.Holder]().FieldByName("XXX_raceDetectHookData"); !ok {
			t.Error("opaque Holder keeps no race-detector shadow: isReceiversOwn names a field that is gone")
		}
	})
	t.Run("oneof-bytes", func(t *testing.T) {
		// isOneofBytes reads the tag protoc-gen-go writes on a oneof's
		// wrapper; the descriptor says which wrapper holds bytes.
		md := (&flat3.Rich{}).ProtoReflect().Descriptor()
		for _, w := range []any{&flat3.Rich_Os{}, &flat3.Rich_Ol{}, &flat3.Rich_Ob{}} {
			st := reflect.TypeOf(w).Elem()
			fd, _ := protoField(st.Field(0), md)
			if fd == nil || fd.ContainingOneof() == nil {
				t.Fatalf("%v: its tag names no oneof member of %v", st, md.FullName())
			}
			if got, want := isOneofBytes(st), fd.Kind() == protoreflect.BytesKind; got != want {
				t.Errorf("%v: isOneofBytes = %v, want %v (%v)", st, got, want, fd.Kind())
			}
		}
	})
	t.Run("oneof-wrappers", func(t *testing.T) {
		// protobuf-go's legacy loader finds a legacy message's oneof
		// members by the method oneofWrappers calls: if it renamed it,
		// the member would be missing from the descriptor it derives.
		got := oneofWrappers(reflect.TypeFor[*legacyPick]())
		if len(got) != 1 || got[0] != reflect.TypeFor[legacyPick_B]() {
			t.Errorf("oneofWrappers = %v, want [%v]", got, reflect.TypeFor[legacyPick_B]())
		}
		md := protoimpl.X.ProtoMessageV2Of(&legacyPick{}).ProtoReflect().Descriptor()
		if od := md.Oneofs().ByName("pick"); od == nil || od.Fields().ByName("b") == nil {
			t.Errorf("protobuf-go's legacy loader did not find the oneof member b of %v through XXX_OneofWrappers", md.FullName())
		}
		if got := oneofWrappers(reflect.TypeFor[*flat3.Rich]()); got != nil {
			t.Errorf("oneofWrappers of protoc-gen-go's code = %v, want none", got)
		}
	})
	t.Run("name-and-type", func(t *testing.T) {
		// protobuf-go matches both by name and type; a TODO in its impl
		// package would make UnknownFields a *[]byte, which the plans do
		// not read.
		if sizeCacheType != reflect.TypeFor[int32]() {
			t.Errorf("protoimpl.SizeCache is %v, want int32", sizeCacheType)
		}
		if got := reflect.TypeFor[protoimpl.UnknownFields](); got != bytesType {
			t.Errorf("protoimpl.UnknownFields is %v, want []byte", got)
		}
		type misnamed struct {
			sizeCache     int64
			XXX_sizecache uint32
			unknownFields string
			// XXX_unrecognized is protobuf-go's other accepted type,
			// which the plans cannot read as bytes.
			XXX_unrecognized *[]byte
		}
		st := reflect.TypeFor[misnamed]()
		for i := range st.NumField() {
			if f := st.Field(i); isSizeCache(f) || isUnknownFields(f) {
				t.Errorf("%s %v matched by its name alone", f.Name, f.Type)
			}
		}
		if _, ok := unknownField(st); ok {
			t.Error("unknownField found a field of another type than []byte")
		}
	})
	t.Run("not-generated", func(t *testing.T) {
		type embeds struct{ open3.Leaf }
		for _, st := range []reflect.Type{reflect.TypeFor[dynamicpb.Message](), reflect.TypeFor[embeds]()} {
			if isGenerated(st) {
				t.Errorf("%v recognised as generated", st)
			}
		}
	})
}

// fieldIndex returns the index of st's field at offset off.
func fieldIndex(st reflect.Type, off uintptr) int {
	for i := range st.NumField() {
		if st.Field(i).Offset == off {
			return i
		}
	}
	return -1
}

// legacyPick is a legacy message, as older generators made them, with a
// oneof its XXX_OneofWrappers lists.
type legacyPick struct {
	Pick isLegacyPick_Pick `protobuf_oneof:"pick"`
}

type isLegacyPick_Pick interface{ isLegacyPick_Pick() }

type legacyPick_B struct {
	B []byte `protobuf:"bytes,1,opt,name=b,proto3,oneof"`
}

func (*legacyPick_B) isLegacyPick_Pick() {}

func (m *legacyPick) Reset()         { *m = legacyPick{} }
func (m *legacyPick) String() string { return "legacyPick" }
func (*legacyPick) ProtoMessage()    {}
func (*legacyPick) XXX_OneofWrappers() []any {
	return []any{(*legacyPick_B)(nil)}
}
