package localgrpc

import (
	"errors"
	"fmt"
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
//
// Without /proc, where chmodSocket cannot work, it falls back to the
// private directory of createSocketLinked.
func createSocket(addr, path string, mode fs.FileMode) (*net.UnixListener, os.FileInfo, error) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return createSocketLinked(addr, path, mode)
	}
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
	if err := chmodSocket(path, mode); err != nil {
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

// chmodSocket sets the mode of the socket file at path without following
// a symbolic link. The directory lock binds only localgrpc's servers: any
// process that may write to the directory could have put a link at path
// since the bind, and chmod(2) would change the mode of what it points
// to. The file is opened as itself (O_PATH|O_NOFOLLOW), checked to be a
// socket, and changed through its /proc/self/fd entry, since fchmod does
// not take an O_PATH descriptor.
func chmodSocket(path string, mode fs.FileMode) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return fmt.Errorf("%s was replaced by something that is not a socket", path)
	}
	return os.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), mode)
}
