package localgrpc

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// listenUnix creates a unix socket file with its final mode before anyone
// can connect: bound under a temporary name, given its mode, then linked
// to its path, which fails rather than replace a socket another server
// created meanwhile.
func listenUnix(a Address, mode fs.FileMode) (*listener, error) {
	path := a.Name
	if err := clearStaleSocket(a.String(), path); err != nil {
		return nil, err
	}
	if len(path) > maxSocketPath {
		return nil, addressError(a.String(), "the socket path is %d bytes long; unix sockets allow at most %d", len(path), maxSocketPath)
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".lgrpc-%08x", rand.Uint32()))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, listenError(a, err)
	}
	l.SetUnlinkOnClose(false) // the socket's name is path, removed by close
	fail := func(reason string, err error) (*listener, error) {
		l.Close()
		os.Remove(tmp)
		return nil, &AddressError{Address: a.String(), Reason: fmt.Sprintf("%s: %v", reason, err), Err: err}
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fail("cannot set the socket's mode", err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fail("another server created the socket meanwhile", err)
		}
		return fail("cannot create the socket", err)
	}
	os.Remove(tmp)
	fi, err := os.Lstat(path)
	if err != nil {
		return fail("the socket vanished", err)
	}
	return &listener{addr: a, net: l, path: path, file: fi}, nil
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
		return &AddressError{Address: addr, Reason: fmt.Sprintf("cannot inspect the socket path: %v", err), Err: err}
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
		return &AddressError{Address: addr, Reason: fmt.Sprintf("cannot tell whether the socket %s is in use: %v", path, err), Err: err}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &AddressError{Address: addr, Reason: fmt.Sprintf("cannot remove the stale socket: %v", err), Err: err}
	}
	return nil
}
