package batch_test

import (
	"fmt"
	"testing"

	"github.com/localgrpc/localgrpc/batch"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
)

// BenchmarkSender is what a Sender adds to the batching a handler could
// write by hand, with a send that keeps nothing: one op is one item.
// impl=hand makes each batch with room for its items and appends to it;
// impl=sender is a Sender whose add appends to the new batch's empty
// repeated field, impl=appender one whose add is Appender's.
func BenchmarkSender(b *testing.B) {
	for _, n := range []int{10, 64} {
		var sent int
		send := func(m *listv1.ListResponse) error { sent += len(m.Strings); return nil }
		b.Run(fmt.Sprintf("batch=%d/impl=hand", n), func(b *testing.B) {
			b.ReportAllocs()
			m := &listv1.ListResponse{Strings: make([]string, 0, n)}
			for b.Loop() {
				m.Strings = append(m.Strings, "item")
				if len(m.Strings) == n {
					send(m)
					m = &listv1.ListResponse{Strings: make([]string, 0, n)}
				}
			}
		})
		b.Run(fmt.Sprintf("batch=%d/impl=sender", n), func(b *testing.B) {
			b.ReportAllocs()
			s := batch.NewSender(send, func(m *listv1.ListResponse, s string) { m.Strings = append(m.Strings, s) }, batch.MaxItems(n))
			for b.Loop() {
				s.Add("item")
			}
			s.Flush()
		})
		b.Run(fmt.Sprintf("batch=%d/impl=appender", n), func(b *testing.B) {
			b.ReportAllocs()
			s := batch.NewSender(send, batch.Appender(stringsField, n), batch.MaxItems(n))
			for b.Loop() {
				s.Add("item")
			}
			s.Flush()
		})
	}
}
