package batch_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/batch"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
)

func stringsField(m *listv1.ListResponse) *[]string { return &m.Strings }

func TestAppender(t *testing.T) {
	var sent []*listv1.ListResponse
	send := func(m *listv1.ListResponse) error { sent = append(sent, m); return nil }
	s := batch.NewSender(send, batch.Appender(stringsField, 64), batch.MaxItems(64))
	var want []string
	for i := range 150 {
		want = append(want, fmt.Sprint(i))
		if err := s.Add(want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, m := range sent {
		got = append(got, m.Strings...)
		// Made once with room for the batch: no doubling on the way.
		if i < 2 && cap(m.Strings) != 64 {
			t.Errorf("batch %d has room for %d strings, want 64", i, cap(m.Strings))
		}
	}
	if !slices.Equal(got, want) || len(sent) != 3 {
		t.Errorf("%d batches of %d strings, want 3 of 150 in order", len(sent), len(got))
	}

	// A batch bigger than the room made grows as append does.
	sent = nil
	s = batch.NewSender(send, batch.Appender(stringsField, 2), batch.MaxItems(5))
	for _, str := range []string{"a", "b", "c", "d", "e"} {
		s.Add(str)
	}
	s.Close()
	if len(sent) != 1 || !slices.Equal(sent[0].Strings, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("batches %v, want one of a..e", sent)
	}
}

// TestAppenderAllocations counts what a batch of 64 costs: with Appender,
// the batch and its field's one array; appending to the empty field, an
// array more per doubling.
func TestAppenderAllocations(t *testing.T) {
	send := func(*listv1.ListResponse) error { return nil }
	for _, tc := range []struct {
		name    string
		add     func(*listv1.ListResponse, string)
		atLeast float64
		atMost  float64
	}{
		{"appender", batch.Appender(stringsField, 64), 2, 2},
		{"append", func(m *listv1.ListResponse, s string) { m.Strings = append(m.Strings, s) }, 8, 8},
	} {
		s := batch.NewSender(send, tc.add, batch.MaxItems(64))
		allocs := testing.AllocsPerRun(100, func() {
			for range 64 {
				s.Add("item")
			}
		})
		if allocs < tc.atLeast || allocs > tc.atMost {
			t.Errorf("add=%s: %v allocations per batch of 64, want %v to %v", tc.name, allocs, tc.atLeast, tc.atMost)
		}
	}
}

func TestAppenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field func(*listv1.ListResponse) *[]string
		n     int
	}{{"field=nil", nil, 1}, {"n=negative", stringsField, -1}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Error("Appender took it")
				}
			}()
			batch.Appender(tc.field, tc.n)
		})
	}
}
