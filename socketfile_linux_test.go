package localgrpc

import (
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Socket creation at a path that holds a symbolic link (to a file, to a
// directory, dangling) is refused and leaves the link and its target as
// they were, as grpc-go's net.Listen does (EADDRINUSE); a stale socket,
// as a kill -9'd server leaves, is replaced; 107 bytes are served at the
// path itself, listed in /proc/net/unix, mode 0600; 108 are refused. These
// hold today.
func TestAttack36SocketPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"tofile": file, "todir": sub, "dangling": filepath.Join(dir, "nowhere")} {
		t.Run("symlink "+name, func(t *testing.T) {
			link := filepath.Join(dir, name)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			s := NewServer()
			defer s.Stop()
			if err := s.Listen("unix:" + link); err == nil {
				t.Fatalf("listened at a symbolic link %s", link)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode().Type() != os.ModeSymlink {
				t.Errorf("the link is gone or changed: %v", err)
			}
			if b, _ := os.ReadFile(file); string(b) != "keep" {
				t.Errorf("the link's target changed: %q", b)
			}
			if entries, _ := os.ReadDir(sub); len(entries) != 0 {
				t.Errorf("a socket was made through the link, in %s", sub)
			}
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
				t.Errorf("a file was made at the dangling link's target")
			}
		})
	}
	t.Run("stale", func(t *testing.T) {
		path := filepath.Join(dir, "stale.sock")
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
			t.Fatal(err)
		}
		syscall.Listen(fd, 1)
		syscall.Close(fd) // as kill -9: the file stays, no one listens
		s := NewServer()
		defer s.Stop()
		if err := s.Listen("unix:" + path); err != nil {
			t.Fatalf("a stale socket was not replaced: %v", err)
		}
	})
	base := filepath.Join(dir, "l") + "/"
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(base) > 100 {
		t.Skipf("temporary directory %s too long", base)
	}
	p107 := base + strings.Repeat("a", 107-len(base))
	t.Run("107 bytes", func(t *testing.T) {
		s := NewServer()
		defer s.Stop()
		if err := s.Listen("unix:" + p107); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p107)
		if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
			t.Fatalf("socket at %s: %v %v", p107, fi, err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() {
			t.Errorf("owner %d, want %d", st.Uid, os.Getuid())
		}
		b, _ := os.ReadFile("/proc/net/unix")
		if !strings.Contains(string(b), " "+p107+"\n") {
			t.Errorf("/proc/net/unix does not list %s", p107)
		}
		c, err := net.Dial("unix", p107)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
	t.Run("108 bytes", func(t *testing.T) {
		s := NewServer()
		defer s.Stop()
		err := s.Listen("unix:" + p107 + "b")
		if err == nil || !strings.Contains(err.Error(), "108 bytes") {
			t.Errorf("108 bytes: %v", err)
		}
	})
}
