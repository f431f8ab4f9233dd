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
		r := &rings{sock: make(chan sockFrame)}
		r.onRecord(c, rec, func(h shmwire.Header, p []byte) error {
			if int(h.Length) != len(p) {
				t.Fatalf("%+v with %d bytes", h, len(p))
			}
			return nil
		})
	})
}
