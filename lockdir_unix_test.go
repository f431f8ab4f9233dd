//go:build unix

package localgrpc

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A lock's release called twice leaves alone the lock that took its file
// descriptor's number since: createSocket's fallback releases early, and
// its deferred release runs again.
func TestLockDirReleaseOnce(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	unlockA := lockDir(a)
	unlockA()
	unlockB := lockDir(b) // likely on the number a's descriptor had
	defer unlockB()
	unlockA()
	d, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
		t.Error("b's lock was released by a second release of a's")
	}
}
