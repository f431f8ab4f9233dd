package bench

import (
	"strings"
	"testing"
)

// TestServerProcessFailsClearly: a server process that cannot serve
// makes startChild fail with what the process said, and none is left
// running.
func TestServerProcessFailsClearly(t *testing.T) {
	for _, c := range []struct {
		spec childSpec
		want string
	}{
		{childSpec{Kind: "nope"}, `no server of kind "nope"`},
		{childSpec{Kind: "grpc", Addr: "tcp:127.0.0.1:0"}, "grpc serves unix: addresses"},
		{childSpec{Kind: "localgrpc", Addr: "shm:"}, "shm:"},
	} {
		_, err := startChild(t, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "exited before it served") {
			t.Errorf("a server process of %+v: %v, want an error saying %q", c.spec, err, c.want)
		}
	}
}
