//go:build unix

package localgrpc

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on dir, which other localgrpc servers,
// in any process, take before they replace or link a socket in it, and
// returns what releases it, once however often it is called. Servers
// hold it for the few system calls that create a socket, so it is waited
// for only briefly: anyone who can read dir can take the lock and hold
// it, and a server must not hang on that.
// When the lock does not come within lockWait, or dir cannot be opened for
// reading (mode -wx), or the filesystem has no flock, the server goes
// unlocked: servers on it then race as they did before there was a lock,
// which beats not serving at all.
func lockDir(dir string) (unlock func()) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	fd := int(d.Fd())
	for deadline := time.Now().Add(lockWait); ; {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EWOULDBLOCK && err != unix.EINTR || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		d.Close()
		return func() {}
	}
	// Once: a second call would unlock whatever file has reused fd since.
	return sync.OnceFunc(func() {
		unix.Flock(fd, unix.LOCK_UN)
		d.Close()
	})
}

// lockWait is how long lockDir waits for another holder of the lock: far
// longer than a server holds it, short enough not to stall a start.
const lockWait = 2 * time.Second
