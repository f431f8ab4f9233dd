package load

import (
	"strings"
	"testing"
)

// TestSpecCheck checks that each wrong Spec is refused naming the flag
// that gave it, and that a right one is accepted.
func TestSpecCheck(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		flag string // named in the error; "" for none
	}{
		{Spec{N: 1, C: 1}, ""},
		{Spec{N: 10, C: 10, Warmup: 5}, ""},
		{Spec{N: 0, C: 1}, "-n"},
		{Spec{N: 1, C: 0}, "-c"},
		{Spec{N: 1, C: 2}, "-c"},
		{Spec{N: 1, C: 1, Warmup: -1}, "--warmup"},
	} {
		err := tc.spec.Check()
		switch {
		case tc.flag == "" && err != nil:
			t.Errorf("%+v: %v", tc.spec, err)
		case tc.flag != "" && err == nil:
			t.Errorf("%+v: accepted", tc.spec)
		case tc.flag != "" && !strings.HasPrefix(err.Error(), tc.flag+" "):
			t.Errorf("%+v: %q does not name %s", tc.spec, err, tc.flag)
		}
	}
}
