package localgrpc

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// createSocket binds the socket at path itself, so that the kernel, ss and
// /proc/net/unix know it by path:
//
//   - with path's directory locked, a stale socket at path is removed;
//   - the socket is bound and listens at path with its final mode from the
//     start, made by a umask of its own (bindWithMode), so no one reaches
//     it before it has that mode;
//   - the bind fails rather than replace a file another process created
//     meanwhile.
//
// Where the mode cannot be made so (unshare(2) refused, as a container's
// seccomp profile may; a default ACL on the directory, whose permissions
// narrow what the umask gives), it falls back to createSocketLinked's
// private directory, which sets the mode with chmod(2).
func createSocket(addr, path string, mode fs.FileMode) (*net.UnixListener, os.FileInfo, error) {
	unlock := lockDir(filepath.Dir(path))
	defer unlock()
	if err := clearStaleSocket(addr, path); err != nil {
		return nil, nil, err
	}
	l, err := bindWithMode(path, mode)
	switch {
	case errors.Is(err, errNoOwnUmask):
		unlock()
		return createSocketLinked(addr, path, mode)
	case errors.Is(err, unix.EADDRINUSE):
		return nil, nil, socketError(addr, "another process created "+path+" meanwhile", err)
	case err != nil:
		return nil, nil, socketError(addr, "cannot bind the socket", err)
	}
	l.SetUnlinkOnClose(false) // its name is path, removed by listener.close
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&(fs.ModeType|fs.ModePerm) == fs.ModeSocket|mode.Perm() {
		return l, fi, nil
	}
	// A default ACL narrowed the mode the umask gave: the socket is
	// closed before anyone could be served, and made the other way.
	l.Close()
	if err == nil {
		os.Remove(path) // ours: the directory is locked
	}
	unlock()
	return createSocketLinked(addr, path, mode)
}

// errNoOwnUmask reports that a thread could not get a umask of its own.
var errNoOwnUmask = errors.New("localgrpc: no umask of the thread's own")

// bindWithMode listens on a unix socket at path whose file has mode from
// the start: the umask makes a socket file's mode, and it is the process's
// own, shared by every thread, so the bind runs on a thread that has
// unshared it (CLONE_FS) and set its own. That thread is never given back
// to the Go scheduler: it exits with the goroutine, umask and all.
func bindWithMode(path string, mode fs.FileMode) (*net.UnixListener, error) {
	type result struct {
		l   *net.UnixListener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			done <- result{nil, errNoOwnUmask}
			return
		}
		unix.Umask(int(^mode.Perm() & fs.ModePerm))
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		done <- result{l, err}
	}()
	r := <-done
	return r.l, r.err
}
