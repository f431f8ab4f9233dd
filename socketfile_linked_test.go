//go:build unix

package localgrpc

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// The way systems other than Linux create a socket, run here too so that
// it stays tested: the socket gets its mode, answers at the path, and no
// private directory is left behind.
func TestCreateSocketLinked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	l, fi, err := createSocketLinked("unix:"+path, path, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if fi.Mode().Perm() != 0o640 || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("socket file mode %v, want a socket of 0640", fi.Mode())
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "s.sock" {
		t.Errorf("%s holds %v, want s.sock alone", dir, entries)
	}
	if _, _, err := createSocketLinked("unix:"+path, path, 0o600); err == nil {
		t.Error("a second socket replaced the live one")
	}
}
