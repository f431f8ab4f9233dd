//go:build !purego

package handover

import "testing"

// eachASCIIPath runs f with the SSE2 path of ascii_amd64.s and then, where
// the CPU has it, with the AVX2 one.
func eachASCIIPath(t *testing.T, f func(t *testing.T)) {
	avx2 := useAVX2
	t.Cleanup(func() { useAVX2 = avx2 })
	useAVX2 = false
	t.Run("path=sse2", f)
	if avx2 {
		useAVX2 = true
		t.Run("path=avx2", f)
	}
}
