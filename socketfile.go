package localgrpc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// listenUnix creates the socket file at a's path such that no one can
// reach it before it has its final mode, and such that of servers racing
// for one path exactly one gets it: a stale socket at the path is
// replaced, a live one or a file of another type is refused. How is
// createSocket's, per system. Errors name the user's path, never a
// temporary one.
func listenUnix(a Address, mode fs.FileMode) (*listener, error) {
	path, addr := a.Path, a.String()
	if len(path) > maxSocketPath {
		return nil, addressError(addr, "the socket path is %d bytes long; unix sockets allow at most %d", len(path), maxSocketPath)
	}
	l, fi, err := createSocket(addr, path, mode)
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false) // its name is path, removed by listener.close
	ul := &unixListener{UnixListener: l, addr: &net.UnixAddr{Name: path, Net: "unix"}}
	return &listener{addr: a, net: ul, path: path, file: fi}, nil
}

// createSocketLinked creates the socket as systems without a better way
// must:
//
//   - the socket is bound in a private directory (0700) made next to the
//     path, on the same filesystem, where only this user can reach it;
//   - it is bound there through /proc/self/fd/N/s when /proc is there, so
//     that the name bound is short whatever the length of the path;
//   - it gets its mode there;
//   - with the path's directory locked, a stale socket at the path is
//     removed and ours is hard-linked into place, which fails rather than
//     replace a file another process created meanwhile.
//
// The kernel keeps the name the socket was bound under: ss and
// /proc/net/unix show the private name, not path.
func createSocketLinked(addr, path string, mode fs.FileMode) (*net.UnixListener, os.FileInfo, error) {
	dir := filepath.Dir(path)
	private, err := os.MkdirTemp(dir, ".lgrpc-")
	if err != nil {
		return nil, nil, socketError(addr, "cannot create the socket in "+dir, err)
	}
	defer os.Remove(private)
	// MkdirTemp's 0700 less the umask is never wider, but may be too
	// narrow to work in.
	if err := os.Chmod(private, 0o700); err != nil {
		return nil, nil, socketError(addr, "cannot create the socket in "+dir, err)
	}
	l, err := bindIn(private, "s")
	if err != nil {
		return nil, nil, socketError(addr, "cannot bind the socket", err)
	}
	l.SetUnlinkOnClose(false)
	bound := filepath.Join(private, "s")
	defer os.Remove(bound)
	fail := func(reason string, err error) (*net.UnixListener, os.FileInfo, error) {
		l.Close()
		return nil, nil, socketError(addr, reason, err)
	}
	if err := os.Chmod(bound, mode); err != nil {
		return fail("cannot set the socket's mode", err)
	}
	fi, err := os.Lstat(bound)
	if err != nil {
		return fail("cannot create the socket", err)
	}
	if err := linkSocket(addr, bound, path); err != nil {
		l.Close()
		return nil, nil, err
	}
	return l, fi, nil
}

// bindIn binds a unix socket named name in dir.
func bindIn(dir, name string) (*net.UnixListener, error) {
	if d, err := os.Open(dir); err == nil {
		defer d.Close()
		short := fmt.Sprintf("/proc/self/fd/%d", d.Fd())
		if fi, err := os.Stat(short); err == nil && fi.IsDir() {
			return net.ListenUnix("unix", &net.UnixAddr{Name: short + "/" + name, Net: "unix"})
		}
	}
	return net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unix"})
}

// linkSocket links the socket at bound to path, replacing a stale socket
// there, with path's directory locked so that servers racing for path
// take turns: the first links its socket, the next finds it live.
func linkSocket(addr, bound, path string) error {
	unlock := lockDir(filepath.Dir(path))
	defer unlock()
	if err := clearStaleSocket(addr, path); err != nil {
		return err
	}
	if err := os.Link(bound, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return socketError(addr, "another process created "+path+" meanwhile", err)
		}
		return socketError(addr, "cannot create the socket", err)
	}
	return nil
}

// socketError reports a failure to create the socket of addr. It keeps
// only the system's reason from err, whose text would name the private
// directory.
func socketError(addr, reason string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return &AddressError{Address: addr, Reason: fmt.Sprintf("%s: %v", reason, err), Err: err}
}

// maxSocketPath is the longest path a unix socket address holds on Linux
// (sun_path is 108 bytes, with a NUL).
const maxSocketPath = 107

// clearStaleSocket removes a socket file left by a dead server. A file
// that is not a socket, or a socket a live server answers on, is an error
// and is left alone.
func clearStaleSocket(addr, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return socketError(addr, "cannot inspect the socket path", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return &AddressError{Address: addr, Reason: fmt.Sprintf("%s exists and is not a socket (%v)", path, fi.Mode().Type())}
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return &AddressError{Address: addr, Reason: fmt.Sprintf("%s is in use: a live server accepts connections on it", path)}
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return socketError(addr, "cannot tell whether the socket "+path+" is in use", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return socketError(addr, "cannot remove the stale socket", err)
	}
	return nil
}

// unixListener is a socket known by the path the user gave: its address,
// and the local address of its connections, are the path, not the name it
// was bound under (a private one, or a relative path).
type unixListener struct {
	*net.UnixListener
	addr *net.UnixAddr
}

func (l *unixListener) Addr() net.Addr { return l.addr }

func (l *unixListener) Accept() (net.Conn, error) {
	c, err := l.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &unixConn{UnixConn: c, local: l.addr}, nil
}

// unixConn is a connection accepted by a unixListener.
type unixConn struct {
	*net.UnixConn
	local net.Addr
}

func (c *unixConn) LocalAddr() net.Addr { return c.local }
