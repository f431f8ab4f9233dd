package handover

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8none"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// linkedLayoutZoo links the zoo packages no other test of this package
// names, so that TestVerifyLayoutZoo finds their messages.
var linkedLayoutZoo = []proto.Message{
	&editionsutf8.Root{}, &editionsutf8none.Strings{}, &opaqueimplicit.Tree{}, &vtclone.Leaf{},
}

// verifiedByLayout returns the struct of mt's messages if newTypedPlan
// verifies its layout: a generated struct without lazy fields.
func verifiedByLayout(mt protoreflect.MessageType) (reflect.Type, bool) {
	t := reflect.TypeOf(mt.Zero().Interface())
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	st := t.Elem()
	return st, isGenerated(st) && generatedStruct(st, mt.Descriptor()) && !hasLazyFields(st)
}

// layoutPlansOf returns new plans of st, the generated struct of md, that
// no other test shares.
func layoutPlansOf(st reflect.Type, md protoreflect.MessageDescriptor) layoutPlans {
	return layoutPlans{
		utf8:    buildUTF8Plan(reflect.PointerTo(st), md, map[reflect.Type]*utf8Plan{}),
		size:    buildSizePlan(st, md),
		shallow: buildShallowPlan(st),
	}
}

// TestVerifyLayoutZoo checks that the plans of every generated message
// type linked in pass the layout check: the module's own, the generator
// zoo (protoc-gen-go's open, hybrid and opaque APIs, editions, proto2,
// vtprotobuf's), protobuf-go's and grpc-go's. A protobuf-go release that
// changes generated code so that the plans misread it fails here, not in
// a user's program, where it would cross by the wire.
func TestVerifyLayoutZoo(t *testing.T) {
	_ = linkedLayoutZoo
	checked, sized := map[string]int{}, 0
	for _, mt := range linkedMessageTypes() {
		st, ok := verifiedByLayout(mt)
		if !ok {
			continue
		}
		md := mt.Descriptor()
		plans := layoutPlansOf(st, md)
		if err := checkLayout(st, md, plans); err != nil {
			t.Errorf("%v: %v", st, err)
		}
		if !verifyLayout(st, md, buildSizePlan(st, md)) {
			t.Errorf("%v: verifyLayout refuses the plans checkLayout accepts", st)
		}
		checked[st.PkgPath()]++
		if plans.size != nil {
			sized++
		}
	}
	for _, pkg := range []string{"editions", "editionsutf8", "editionsutf8none", "flat3", "hybrid", "opaque", "opaqueimplicit", "open3", "proto2", "vtclone"} {
		if checked["github.com/localgrpc/localgrpc/internal/zoo/"+pkg] == 0 {
			t.Errorf("no message of the zoo's %s checked", pkg)
		}
	}
	t.Logf("checked %d packages, %d types with a size plan", len(checked), sized)
	if len(checked) < 20 || sized < 20 {
		t.Errorf("checked messages of %d packages, %d with a size plan: too few to stand for generated code", len(checked), sized)
	}
}

// TestVerifyLayoutCatches corrupts one plan at a time, as a generated
// struct that changed under the plans would, and checks that the layout
// check finds each.
func TestVerifyLayoutCatches(t *testing.T) {
	flat := reflect.TypeFor[flat3.Flat]()
	offset := func(name string) uintptr {
		f, ok := flat.FieldByName(name)
		if !ok {
			t.Fatalf("flat3.Flat has no field %s", name)
		}
		return f.Offset
	}
	sizeField := func(p layoutPlans, name string) *sizeField {
		i := slices.IndexFunc(p.size.fields, func(f sizeField) bool { return f.offset == offset(name) })
		if i < 0 {
			t.Fatalf("the size plan reads no field %s", name)
		}
		return &p.size.fields[i]
	}
	utf8Field := func(p layoutPlans, name string) int {
		i := slices.IndexFunc(p.utf8.fields, func(f utf8Field) bool { return f.offset == offset(name) })
		if i < 0 {
			t.Fatalf("the UTF-8 plan reads no field %s", name)
		}
		return i
	}
	for _, tc := range []struct {
		name    string
		st      reflect.Type
		corrupt func(layoutPlans)
		want    string // a word of the disagreement found
	}{
		{"size: offset shifted", flat, func(p layoutPlans) { sizeField(p, "S").offset = offset("Names") }, "size plan measures"},
		{"size: kind swapped", flat, func(p layoutPlans) { sizeField(p, "I").kind = sizeUint32 }, "size plan measures"},
		{"size: bytes read as a string", flat, func(p layoutPlans) { sizeField(p, "B").kind = sizeString }, "shares B"},
		{"size: a list of messages read as a bool", flat, func(p layoutPlans) { sizeField(p, "Leaves").kind = sizeBool }, "size plan measures"},
		{"size: UTF-8 unchecked", flat, func(p layoutPlans) { sizeField(p, "S").utf8 = false }, "not UTF-8"},
		{"utf8: field dropped", flat, func(p layoutPlans) {
			p.utf8.fields = slices.Delete(p.utf8.fields, utf8Field(p, "S"), utf8Field(p, "S")+1)
		}, "not UTF-8"},
		{"utf8: offset shifted", flat, func(p layoutPlans) { p.utf8.fields[utf8Field(p, "S")].offset = offset("B") }, "not UTF-8"},
		{"shallow: move dropped", flat, func(p layoutPlans) { p.shallow.moves = p.shallow.moves[:len(p.shallow.moves)-1] }, "shallow plan"},
		{"shallow: a message with oneofs, its strings not moved", reflect.TypeFor[flat3.Rich](), func(p layoutPlans) {
			p.shallow.moves = slices.DeleteFunc(p.shallow.moves, func(m move) bool { return m.kind == moveString })
		}, "shallow plan"},
		{"shallow: size cache not found", flat, func(p layoutPlans) { p.shallow.sizeCaches = nil }, "size caches"},
		{"shallow: extensions not found", reflect.TypeFor[proto2.Record](), func(p layoutPlans) { p.shallow.hasExtensions = false }, "extensions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := reflect.New(tc.st).Interface().(proto.Message).ProtoReflect().Descriptor()
			p := layoutPlansOf(tc.st, md)
			if err := checkLayout(tc.st, md, p); err != nil {
				t.Fatalf("before the corruption: %v", err)
			}
			p = layoutPlansOf(tc.st, md)
			if p.size != nil {
				p.size.shallow = buildShallowPlan(tc.st) // the cached one stays as it is
			}
			tc.corrupt(p)
			err := checkLayout(tc.st, md, p)
			if err == nil {
				t.Fatal("the corrupted plan passes the layout check")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checkLayout = %v; want a disagreement naming %q", err, tc.want)
			}
		})
	}
}

// BenchmarkVerifyLayout measures verifyLayout, paid once per message type
// when its strategy is made, never per message.
func BenchmarkVerifyLayout(b *testing.B) {
	for _, m := range []proto.Message{&flat3.Leaf{}, &flat3.Flat{}, &flat3.Rich{}, &descriptorpb.FileDescriptorProto{}} {
		st, md := reflect.TypeOf(m).Elem(), m.ProtoReflect().Descriptor()
		b.Run("type="+string(md.Name()), func(b *testing.B) {
			for b.Loop() {
				if !verifyLayout(st, md, buildSizePlan(st, md)) {
					b.Fatal("layout refused")
				}
			}
		})
	}
}
