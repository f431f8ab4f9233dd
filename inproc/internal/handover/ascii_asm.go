//go:build (amd64 || arm64) && !purego

package handover

// asciiPrefix returns how many strings at the start of ss hold only bytes
// below 0x80 (ascii_amd64.s, ascii_arm64.s). It reads each string's bytes
// and no byte past them.
//
//go:noescape
func asciiPrefix(ss []string) int
