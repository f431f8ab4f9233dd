//go:build amd64 || arm64

package goroutine

// Current returns an identity of the running goroutine: the address of
// the runtime's descriptor of it, unique among live goroutines and stable
// while it lives (a goroutine that ended may leave it to a new one). It
// costs a load from thread-local storage or a register.
func Current() uintptr
