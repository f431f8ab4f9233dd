//go:build !(amd64 || arm64) || purego

package handover

// asciiPrefix returns how many strings at the start of ss hold only bytes
// below 0x80.
func asciiPrefix(ss []string) int { return asciiPrefixWords(ss) }
