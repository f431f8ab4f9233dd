//go:build unix

package localgrpc

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on dir, which other localgrpc servers,
// in any process, take before they replace or link a socket in it, and
// returns what releases it. A directory that cannot be opened for reading
// (mode -wx), or a filesystem without flock, goes unlocked: servers on it
// then race as they did before there was a lock, which beats refusing to
// serve there at all.
func lockDir(dir string) (unlock func()) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	fd := int(d.Fd())
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return func() {}
	}
	return func() {
		unix.Flock(fd, unix.LOCK_UN)
		d.Close()
	}
}
