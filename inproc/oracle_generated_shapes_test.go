package inproc_test

import (
	"math"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8none"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestGeneratedShapesAsGRPC runs generated types of the zoo (flat3's
// proto3 flat and rich messages, editionsutf8's and editionsutf8none's
// per-field and per-file UTF-8 validation and extensions, opaqueimplicit's
// opaque API with implicit presence, vtclone's fast clones) through the
// oracle harness: what each side receives, and what becomes of the
// client's message, as over grpc-go, in every mode.
func TestGeneratedShapesAsGRPC(t *testing.T) {
	negZero := math.Copysign(0, -1)
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "u")
	cases := []oracleCase{
		{name: "flat/full", msg: func() proto.Message { return sentFlat("oracle", 4) }},
		{name: "flat/neg-zero-nan", msg: func() proto.Message {
			return &flat3.Flat{D: negZero, F: float32(math.NaN()), Leaf: &flat3.Leaf{D: math.Float64frombits(0x7ff8000000000123)}}
		}},
		{name: "flat/nested-unknown", msg: func() proto.Message {
			l := &flat3.Leaf{S: "l"}
			l.ProtoReflect().SetUnknown(unknown)
			return &flat3.Flat{Leaves: []*flat3.Leaf{l}}
		}},
		{name: "flat/nil-in-list", msg: func() proto.Message { return &flat3.Flat{Leaves: []*flat3.Leaf{{S: "a"}, nil}} }},
		{name: "flat/invalid-utf8-deep", msg: func() proto.Message {
			return &flat3.Flat{Child: &flat3.Flat{Leaves: []*flat3.Leaf{{Tags: []string{"ok", badUTF8}}}}}
		}},
		{name: "order/invalid", msg: func() proto.Message { return &flat3.Order{Third: badUTF8} }},
		{name: "rich/full", msg: func() proto.Message {
			return &flat3.Rich{S: "s", Kv: map[string]string{"a": "b"}, Pick: &flat3.Rich_Ob{Ob: []byte{}}, Leaves: []*flat3.Leaf{{}}, Nums: []int32{-1, 0}, B: []byte{0}, Opt: proto.String("")}
		}},
		{name: "rich/oneof-leaf-nil", msg: func() proto.Message { return &flat3.Rich{Pick: &flat3.Rich_Ol{}} }},
		{name: "rich/map-invalid-key", msg: func() proto.Message { return &flat3.Rich{Kv: map[string]string{badUTF8: "v"}} }},
		{name: "editions/raw-not-checked", msg: func() proto.Message {
			return &editionsutf8.Root{Raw: badUTF8, Raws: []string{badUTF8}, Rawkv: map[string]string{badUTF8: badUTF8}, Leaf: &editionsutf8.Leaf{Raw: badUTF8}}
		}},
		{name: "editions/checked-in-leaf", msg: func() proto.Message {
			return &editionsutf8.Root{Leaves: []*editionsutf8.Leaf{{Raw: "x"}, {S: badUTF8}}}
		}},
		{name: "editions/extensions", msg: func() proto.Message {
			m := &editionsutf8.Root{S: "s"}
			proto.SetExtension(m, editionsutf8.E_ExtS, "é")
			proto.SetExtension(m, editionsutf8.E_ExtTags, []string{"a"})
			proto.SetExtension(m, editionsutf8.E_ExtLeaf, &editionsutf8.Leaf{S: "x"})
			return m
		}},
		{name: "editions/extension-leaf-invalid", msg: func() proto.Message {
			m := &editionsutf8.Root{}
			proto.SetExtension(m, editionsutf8.E_ExtLeaf, &editionsutf8.Leaf{S: badUTF8})
			return m
		}},
		{name: "editions/file-none", msg: func() proto.Message {
			return &editionsutf8none.Strings{S: badUTF8, Tags: []string{badUTF8}, Kv: map[string]string{badUTF8: "v"}}
		}},
		{name: "editions/file-none-verify-field", msg: func() proto.Message { return &editionsutf8none.Strings{V: badUTF8} }},
		{name: "opaque/full", msg: func() proto.Message {
			return opaqueimplicit.Tree_builder{S: "s", B: []byte{1}, Names: []string{"n"}, Leaf: opaqueimplicit.Leaf_builder{S: "l"}.Build(),
				Leaves: []*opaqueimplicit.Leaf{opaqueimplicit.Leaf_builder{Tags: []string{"t"}}.Build()}, D: negZero, Kv: map[string]string{"k": "v"}}.Build()
		}},
		{name: "opaque/invalid", msg: func() proto.Message {
			return opaqueimplicit.Tree_builder{Leaves: []*opaqueimplicit.Leaf{opaqueimplicit.Leaf_builder{Tags: []string{badUTF8}}.Build()}}.Build()
		}},
		{name: "vt/flat", msg: func() proto.Message {
			return &vtclone.Flat{S: "s", B: []byte{}, Names: []string{"n"}, Leaf: &vtclone.Leaf{B: []byte{}}, Leaves: []*vtclone.Leaf{{S: "x"}}}
		}},
		{name: "vt/rich", msg: func() proto.Message {
			return &vtclone.Rich{Kv: map[string]string{"k": "v"}, Pick: &vtclone.Rich_Ol{Ol: &vtclone.Leaf{S: "o"}}, Nums: []int32{1}, B: []byte{}}
		}},
		{name: "vt/rich-nested-unknown", msg: func() proto.Message {
			l := &vtclone.Leaf{S: "l"}
			l.ProtoReflect().SetUnknown(unknown)
			return &vtclone.Rich{Pick: &vtclone.Rich_Ol{Ol: l}}
		}},
		{name: "vt/invalid", msg: func() proto.Message { return &vtclone.Rich{Kv: map[string]string{"k": badUTF8}} }},
		{name: "dynamic-to-generated", msg: func() proto.Message {
			d := dynamicpb.NewMessage((&flat3.Flat{}).ProtoReflect().Descriptor())
			proto.Merge(d, sentFlat("dyn", 3))
			return d
		}, recv: func() proto.Message { return &flat3.Flat{} }},
		{name: "none-to-verify", msg: func() proto.Message { return &editionsutf8.Unchecked{S: badUTF8} }, recv: func() proto.Message { return &flat3.Leaf{} }},
	}
	oracleAgree(t, cases)
}
