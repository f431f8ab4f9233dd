package localgrpc

import (
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A default ACL on the directory narrows what the umask gives a socket
// file (af_unix applies the umask, then the ACL's permissions): the socket
// still has exactly the mode asked for, made the private directory's way.
func TestSocketModeUnderDefaultACL(t *testing.T) {
	dir := t.TempDir()
	// system.posix_acl_default: version 2, then user::rwx, group::---,
	// other::--- (tag, perm, id), as `setfacl -d -m g::-,o::-` makes it.
	acl := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range []struct{ tag, perm uint16 }{{0x01, 7}, {0x04, 0}, {0x20, 0}} {
		acl = binary.LittleEndian.AppendUint16(acl, e.tag)
		acl = binary.LittleEndian.AppendUint16(acl, e.perm)
		acl = binary.LittleEndian.AppendUint32(acl, 0xffffffff)
	}
	if err := unix.Setxattr(dir, "system.posix_acl_default", acl, 0); err != nil {
		t.Skipf("cannot set a default ACL on %s (%v): the filesystem may not take them", dir, err)
	}
	// The ACL is in force: a socket bound there the plain way is narrower.
	probe := filepath.Join(dir, "probe")
	pl, err := net.ListenUnix("unix", &net.UnixAddr{Name: probe, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(probe)
	pl.Close()
	if fi.Mode().Perm()&0o077 != 0 {
		t.Skipf("the default ACL did not narrow a socket (%v): nothing to test", fi.Mode())
	}
	for _, mode := range []os.FileMode{0o600, 0o660} {
		path := filepath.Join(dir, "s-"+mode.String())
		l, fi, err := createSocket("unix:"+path, path, mode)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.Lstat(path); err != nil || got.Mode().Perm() != mode || !os.SameFile(got, fi) {
			t.Errorf("mode %v: the socket's file %v, %v", mode, got.Mode(), err)
		}
		l.Close()
	}
}
