package handover

import (
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8none"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/protobuf/proto"
)

// TestSendRefusesInvalidUTF8AsMarshal: Send, by the plans a method keeps,
// refuses exactly what proto.Marshal refuses, for strings in each place
// the plans read them (a flat message's strings, lists, nested and
// repeated nested messages, a recursive child; maps, oneofs, optional
// fields; editions fields with and without validation and extensions),
// at several lengths and positions, a valid message between each two so
// that the plans are the kept ones.
func TestSendRefusesInvalidUTF8AsMarshal(t *testing.T) {
	bads := []string{"\xff", "ok\xffno", strings.Repeat("a", 31) + "\x80", strings.Repeat("é", 40) + "\xc3", strings.Repeat("b", 100) + "\xed\xa0\x80"}
	var cases []func(bad string) proto.Message
	add := func(f func(bad string) proto.Message) { cases = append(cases, f) }
	add(func(bad string) proto.Message { return &flat3.Flat{S: bad} })
	add(func(bad string) proto.Message { return &flat3.Flat{Names: []string{"a", "b", bad, "c"}} })
	add(func(bad string) proto.Message { return &flat3.Flat{Leaf: &flat3.Leaf{S: bad}} })
	add(func(bad string) proto.Message { return &flat3.Flat{Leaf: &flat3.Leaf{Tags: []string{"t", bad}}} })
	add(func(bad string) proto.Message {
		return &flat3.Flat{Leaves: []*flat3.Leaf{{S: "ok"}, {Tags: []string{"é", bad}}}}
	})
	add(func(bad string) proto.Message {
		return &flat3.Flat{Child: &flat3.Flat{Child: &flat3.Flat{Names: []string{bad}}}}
	})
	add(func(bad string) proto.Message {
		return &flat3.Order{Third: "ok", Second: []string{"x"}, First: &flat3.Leaf{S: bad}}
	})
	add(func(bad string) proto.Message { return &flat3.Rich{Kv: map[string]string{bad: "v"}} })
	add(func(bad string) proto.Message { return &flat3.Rich{Kv: map[string]string{"k": "v", "k2": bad}} })
	add(func(bad string) proto.Message { return &flat3.Rich{Pick: &flat3.Rich_Os{Os: bad}} })
	add(func(bad string) proto.Message { return &flat3.Rich{Pick: &flat3.Rich_Ol{Ol: &flat3.Leaf{S: bad}}} })
	add(func(bad string) proto.Message { return &flat3.Rich{Opt: proto.String(bad)} })
	add(func(bad string) proto.Message { return &flat3.Rich{Leaves: []*flat3.Leaf{{}, {S: bad}}} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{S: bad} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{Raw: bad} }) // not checked
	add(func(bad string) proto.Message { return &editionsutf8.Root{Tags: []string{"a", bad}} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{Raws: []string{"a", bad}} }) // not checked
	add(func(bad string) proto.Message { return &editionsutf8.Root{Leaf: &editionsutf8.Leaf{Raw: bad}} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{Leaves: []*editionsutf8.Leaf{{S: bad}}} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{Kv: map[string]string{"k": bad}} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{Rawkv: map[string]string{bad: bad}} })
	add(func(bad string) proto.Message { return &editionsutf8.Root{Ps: proto.String(bad)} })
	add(func(bad string) proto.Message {
		m := &editionsutf8.Root{}
		proto.SetExtension(m, editionsutf8.E_ExtS, bad)
		return m
	})
	add(func(bad string) proto.Message {
		m := &editionsutf8.Root{}
		proto.SetExtension(m, editionsutf8.E_ExtTags, []string{"a", bad})
		return m
	})
	add(func(bad string) proto.Message {
		m := &editionsutf8.Root{}
		proto.SetExtension(m, editionsutf8.E_ExtLeaf, &editionsutf8.Leaf{S: bad})
		return m
	})
	add(func(bad string) proto.Message { return &editionsutf8.Unchecked{S: bad} })
	add(func(bad string) proto.Message {
		return &editionsutf8none.Strings{S: bad, Tags: []string{bad}, Kv: map[string]string{bad: bad}}
	})
	add(func(bad string) proto.Message { return &editionsutf8none.Strings{V: bad} })
	add(func(bad string) proto.Message {
		return opaqueimplicit.Tree_builder{S: "ok", Names: []string{"n", bad}}.Build()
	})
	add(func(bad string) proto.Message {
		return opaqueimplicit.Tree_builder{Leaves: []*opaqueimplicit.Leaf{opaqueimplicit.Leaf_builder{S: bad}.Build()}}.Build()
	})
	add(func(bad string) proto.Message {
		return opaqueimplicit.Tree_builder{Kv: map[string]string{"k": bad}}.Build()
	})
	add(func(bad string) proto.Message { return &vtclone.Flat{Leaf: &vtclone.Leaf{Tags: []string{bad}}} })
	add(func(bad string) proto.Message { return &vtclone.Rich{Pick: &vtclone.Rich_Os{Os: bad}} })
	eachASCIIPath(t, func(t *testing.T) {
		for ci, mk := range cases {
			for _, mode := range []Mode{Clone, Share} {
				slot := new(Slot)
				dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: DefaultMaxRecvMsgSize}, Slot: slot}
				for round := range 3 {
					for _, bad := range bads {
						for _, m := range []proto.Message{mk("fine é"), mk(bad)} {
							_, merr := proto.Marshal(m)
							_, _, err := sendAs(m, mode, dir)
							if (err != nil) != (merr != nil) {
								t.Fatalf("case %d %T mode %d round %d bad %q: Send: %v; proto.Marshal: %v", ci, m, mode, round, bad, err, merr)
							}
						}
					}
				}
			}
		}
	})
}

// TestSendRefusesInvalidUTF8InLongListsAndStrings: messages whose strings take more
// than a chunk of the check (asciiChunk): a list of many short strings,
// one bad at places on either side of where the list is cut, and a
// nested one; a single string bad just past a chunk; Send refuses each as
// proto.Marshal does, and takes the same ones once they are made valid.
func TestSendRefusesInvalidUTF8InLongListsAndStrings(t *testing.T) {
	const n = 3 * asciiChunk / 10 // strings of 10 bytes: three chunks
	names := make([]string, n)
	for i := range names {
		names[i] = "0123456789"
	}
	long := []byte(strings.Repeat("L", 2*asciiChunk+10))
	for _, mode := range []Mode{Clone, Share} {
		dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: 64 << 20}, Slot: new(Slot)}
		for _, bad := range []int{0, asciiChunk/10 - 1, asciiChunk / 10, asciiChunk/10 + 1, 2 * asciiChunk / 10, n - 1} {
			names[bad] = "01234\xff6789"
			for _, m := range []proto.Message{&flat3.Flat{Names: names}, &flat3.Flat{Leaf: &flat3.Leaf{Tags: names}}, &flat3.Rich{Leaves: []*flat3.Leaf{{Tags: names}}}} {
				_, merr := proto.Marshal(m)
				if _, _, err := sendAs(m, mode, dir); (err != nil) != (merr != nil) || err == nil {
					t.Fatalf("mode %d %T bad at %d: Send %v, proto.Marshal %v", mode, m, bad, err, merr)
				}
			}
			names[bad] = "0123456789"
		}
		if _, _, err := sendAs(&flat3.Flat{Names: names}, mode, dir); err != nil {
			t.Fatalf("mode %d: all valid: %v", mode, err)
		}
		for _, at := range []int{asciiChunk - 1, asciiChunk, asciiChunk + 1, 2*asciiChunk + 9} {
			long[at] = 0x80
			m := &flat3.Flat{S: string(long)}
			if _, _, err := sendAs(m, mode, dir); err == nil {
				t.Fatalf("mode %d: a long string bad at %d was taken", mode, at)
			}
			long[at] = 'L'
		}
		if _, _, err := sendAs(&flat3.Flat{S: string(long)}, mode, dir); err != nil {
			t.Fatalf("mode %d: a long valid string: %v", mode, err)
		}
	}
}
