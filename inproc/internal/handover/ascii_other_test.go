//go:build !amd64 || purego

package handover

import "testing"

// eachASCIIPath runs f: the machine has one path through asciiPrefix.
func eachASCIIPath(t *testing.T, f func(t *testing.T)) { f(t) }
