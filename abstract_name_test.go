package localgrpc_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc"
)

// TestAbstractNameLimit checks that an abstract socket name longer than
// Linux allows (107 bytes: the address holds a NUL before it) is refused
// by name, with the limit, rather than by a raw "bind: invalid argument",
// and that the longest allowed one binds.
func TestAbstractNameLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets exist only on Linux")
	}
	long := "unix:@" + strings.Repeat("x", 108)
	if _, err := localgrpc.ParseAddress(long); err == nil || !strings.Contains(err.Error(), "107") {
		t.Errorf("ParseAddress of a 108-byte abstract name: %v, want an error naming the limit", err)
	}
	srv := localgrpc.NewServer()
	defer srv.Stop()
	err := srv.Listen(long)
	var aerr *localgrpc.AddressError
	if !errors.As(err, &aerr) || !strings.Contains(err.Error(), "107") {
		t.Errorf("Listen on a 108-byte abstract name: %v, want an *AddressError naming the limit", err)
	}
	name := uniqueName(t)
	longest := "unix:@" + name + strings.Repeat("y", 107-len(name))
	if err := srv.Listen(longest); err != nil {
		t.Errorf("Listen on a 107-byte abstract name: %v", err)
	}
}
