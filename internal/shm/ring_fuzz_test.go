//go:build linux

package shm

import (
	"testing"

	"github.com/localgrpc/localgrpc/internal/shmwire"
)

// FuzzRingRecord parses any record a peer could put in its ring: frames
// are handed on whole or the record is refused, never a panic.
func FuzzRingRecord(f *testing.F) {
	f.Add(append([]byte{recordFrames}, shmwire.AppendFrame(nil, 1, shmwire.Message, 0, []byte("hi"))...))
	f.Add([]byte{recordSocket, 0, 0, 0, 0, 0, 0, 0, 12})
	f.Add([]byte{7})
	f.Fuzz(func(t *testing.T, rec []byte) {
		c := &conn{failed: make(chan struct{})}
		close(c.failed) // a socket record finds nothing more to come
		r := &rings{sock: make(chan frame)}
		r.onRecord(c, rec, func(f frame) error {
			if int(f.h.Length) != len(f.p) {
				t.Fatalf("%+v with %d bytes", f.h, len(f.p))
			}
			return nil
		})
	})
}
