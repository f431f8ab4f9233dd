package localgrpc

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestChmodSocketFollowsNoLink checks that the mode a server gives its
// socket never lands on what a link put at the socket's path points to:
// a process that may write to the directory can swap one in between the
// bind and the chmod.
func TestChmodSocketFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "secret")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "s")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := chmodSocket(link, 0o666); err == nil {
		t.Error("chmodSocket changed the mode through a link")
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the link's target: %v, %v; want mode 0600 untouched", fi.Mode(), err)
	}

	if err := chmodSocket(target, 0o666); err == nil {
		t.Error("chmodSocket changed the mode of a regular file")
	}

	sock := filepath.Join(dir, "real")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := chmodSocket(sock, 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the socket: %v, %v; want mode 0640", fi.Mode(), err)
	}
}
