//go:build !unix

package localgrpc

// lockDir does nothing where there is no flock: servers racing for a
// socket path there are not serialized.
func lockDir(string) (unlock func()) { return func() {} }
