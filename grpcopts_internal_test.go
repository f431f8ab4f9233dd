package localgrpc

import (
	"reflect"
	"testing"
)

// TestDiffersFailsClosed checks the comparison the server-option check
// relies on: a field an option set differs from its default whatever its
// kind, equal ones do not, and a kind it cannot compare counts as set.
func TestDiffersFailsClosed(t *testing.T) {
	type inner struct{ n int }
	type opts struct {
		f   func()
		p   *int
		s   []int
		b   bool
		u   uint32
		str string
		i   any
		in  inner
		c   complex64
	}
	one := 1
	set := opts{f: func() {}, p: &one, s: []int{1}, b: true, u: 7, str: "x", i: 3, in: inner{n: 2}, c: 1}
	v, def := reflect.ValueOf(set), reflect.ValueOf(opts{})
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		d, err := differs(v.Field(i), def.Field(i))
		if !d {
			t.Errorf("field %s set by an option does not differ from its default (err %v)", name, err)
		}
		same, err := differs(def.Field(i), def.Field(i))
		if same && err == nil {
			t.Errorf("field %s at its default differs from it", name)
		}
	}
}
