package handover

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestShortHighBits: every string of 1 to shortASCIIMax bytes, with one
// high byte at each position or none, cut from a buffer whose bytes
// around it are all high, so that a read before or past the string would
// call an ASCII string not ASCII: shortHighBits tells ASCII as
// utf8.ValidString's ASCII test does.
func TestShortHighBits(t *testing.T) {
	buf := []byte(strings.Repeat("\xff", 64))
	for n := 1; n <= shortASCIIMax; n++ {
		for pos := -1; pos < n; pos++ {
			for _, hi := range []byte{0x80, 0xc3, 0xff} {
				for off := 8; off < 8+16; off++ {
					b := buf[off : off+n : off+n]
					for i := range b {
						b[i] = 'a' + byte(i)
					}
					if pos >= 0 {
						b[pos] = hi
					}
					s := string(b)
					if got, want := shortHighBits(s)&asciiHighBits == 0, pos < 0; got != want {
						t.Fatalf("n=%d pos=%d hi=%#x offset %d: ASCII %v, want %v", n, pos, hi, off, got, want)
					}
					for i := range b {
						b[i] = 0xff
					}
				}
			}
		}
	}
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
// around shortASCIIMax and the one-byte length prefix, each ASCII, with a
// valid multi-byte rune, and with a byte that is not UTF-8, at its start,
// middle and end.
func oddStrings() []string {
	var ss []string
	for _, n := range []int{1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 18, 31, 100, 127, 128, 300} {
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

// TestSizeOneStringAsMarshal: the plan of a one-string message measures
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
