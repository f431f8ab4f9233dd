package handover

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/protobuf/proto"
)

// TestSendUTF8StringsAtGuardPages: messages whose strings are made
// (unsafe.String) over memory that ends, or starts, at a page the process
// may not read, at lengths around the vector steps and around a chunk of
// the check, valid and with one bad byte last or first: Send reads no
// byte outside them (a fault ends the test) and refuses what
// proto.Marshal refuses.
func TestSendUTF8StringsAtGuardPages(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		page := syscall.Getpagesize()
		pages := (asciiChunk+2*page)/page + 1
		mem := guardedPages(t, pages)
		for i := range mem {
			mem[i] = 'g'
		}
		dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: 64 << 20}, Slot: new(Slot)}
		for _, n := range []int{1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, asciiChunk - 1, asciiChunk, asciiChunk + 1, asciiChunk + 33} {
			for _, atEnd := range []bool{true, false} {
				start := 0
				if atEnd {
					start = len(mem) - n
				}
				b := mem[start : start+n]
				for _, bad := range []int{-1, 0, n - 1} {
					if bad >= 0 {
						b[bad] = 0xff
					}
					s := unsafe.String(&b[0], n)
					for _, m := range []proto.Message{&flat3.Flat{S: s}, &flat3.Flat{Names: []string{"a", s}}, &flat3.Rich{Kv: map[string]string{s: "v"}}, &flat3.Rich{Pick: &flat3.Rich_Os{Os: s}}} {
						for _, mode := range []Mode{Clone, Share} {
							_, _, err := sendAs(m, mode, dir)
							if (err != nil) != (bad >= 0) {
								t.Fatalf("n=%d at end=%v bad=%d %T mode %d: Send: %v", n, atEnd, bad, m, mode, err)
							}
						}
					}
					if bad >= 0 {
						b[bad] = 'g'
					}
				}
			}
		}
	})
}
