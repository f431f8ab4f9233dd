package handover

import (
	"fmt"
	"strings"
	"testing"

	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	gproto "google.golang.org/protobuf/proto"
)

// BenchmarkSend measures what sending costs a message before any hand-off,
// by part: the encodability check and size (the first time and once the
// type is known), protobuf's own size, the copy of each mode, and
// the receiver's shallow copy.
func BenchmarkSend(b *testing.B) {
	dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: DefaultMaxRecvMsgSize}, Slot: new(Slot)}
	for _, n := range []int{1, 10, 100} {
		m := &listv1.ListResponse{}
		for range n {
			m.Strings = append(m.Strings, strings.Repeat("x", 100))
		}
		b.Run(fmt.Sprintf("part=check/respSize=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := measure(m, &dir.Slot.last); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("part=check-known/respSize=%d", n), func(b *testing.B) {
			if _, err := measure(m, &dir.Slot.last); err != nil { // keeps the plans
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err, ok := measureKnown(m, &dir.Slot.last); err != nil || !ok {
					b.Fatal(err, ok)
				}
			}
		})
		b.Run(fmt.Sprintf("part=size/respSize=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = gproto.Size(m)
			}
		})
		b.Run(fmt.Sprintf("part=receive/respSize=%d", n), func(b *testing.B) {
			v, _, err := sendAs(m, Share, dir)
			if err != nil {
				b.Fatal(err)
			}
			dst := new(listv1.ListResponse)
			b.ReportAllocs()
			for b.Loop() {
				if err := dir.Receive(dst, v); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, mode := range []Mode{Share, Clone} {
			b.Run(fmt.Sprintf("part=send/copy=%v/respSize=%d", mode, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := sendAs(m, mode, dir); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
