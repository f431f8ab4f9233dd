package localgrpc

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// createSocket binds the socket at path itself, so that the kernel, ss and
// /proc/net/unix know it by path:
//
//   - with path's directory locked, a stale socket at path is removed;
//   - the socket is bound at path, which fails rather than replace a file
//     another process created meanwhile;
//   - it gets its mode, and only then listens: until listen(2), a
//     connect(2) to it is refused (ECONNREFUSED), so no one reaches it
//     before it has its final mode, whatever the umask or a default ACL
//     made of it.
func createSocket(addr, path string, mode fs.FileMode) (*net.UnixListener, os.FileInfo, error) {
	unlock := lockDir(filepath.Dir(path))
	defer unlock()
	if err := clearStaleSocket(addr, path); err != nil {
		return nil, nil, err
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, nil, socketError(addr, "cannot create the socket", err)
	}
	f := os.NewFile(uintptr(fd), path) // closes fd, whatever happens
	defer f.Close()
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		if errors.Is(err, unix.EADDRINUSE) {
			return nil, nil, socketError(addr, "another process created "+path+" meanwhile", err)
		}
		return nil, nil, socketError(addr, "cannot bind the socket", err)
	}
	fi, err := os.Lstat(path)
	fail := func(reason string, err error) (*net.UnixListener, os.FileInfo, error) {
		if fi != nil {
			os.Remove(path) // ours: the directory is locked
		}
		return nil, nil, socketError(addr, reason, err)
	}
	if err != nil {
		return fail("cannot create the socket", err)
	}
	if err := os.Chmod(path, mode); err != nil {
		return fail("cannot set the socket's mode", err)
	}
	if fi, err = os.Lstat(path); err != nil {
		return fail("cannot create the socket", err)
	}
	// The kernel caps the backlog at net.core.somaxconn, which is what
	// Go's net package asks for.
	if err := unix.Listen(fd, 1<<16); err != nil {
		return fail("cannot listen on the socket", err)
	}
	l, err := net.FileListener(f)
	if err != nil {
		return fail("cannot listen on the socket", err)
	}
	return l.(*net.UnixListener), fi, nil
}
