package batch

import "fmt"

// Appender returns an add function for NewSender.
// The function appends each item to the repeated field that field points to.
// At a batch's first item, it makes the field with room for n items.
//
// Give it MaxItems's n: a batch is then one allocation.
// Appending to the empty field of a new batch instead reallocates and
// copies at every doubling, seven times on the way to 64 items.
// Those reallocations were most of what a Sender cost over batching by hand
// in the examples' book store.
// A batch that outgrows n (MaxItems above n) still takes every item.
// Appender panics on a nil field or a negative n, as NewSender does on
// options out of range.
func Appender[M, I any](field func(*M) *[]I, n int) func(*M, I) {
	if field == nil || n < 0 {
		panic(fmt.Sprintf("batch: Appender needs a field function and a room of at least 0 items, not %d", n))
	}
	return func(m *M, item I) {
		f := field(m)
		if *f == nil {
			*f = make([]I, 0, n)
		}
		*f = append(*f, item)
	}
}
