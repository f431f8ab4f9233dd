//go:build !linux

package localgrpc

import (
	"io/fs"
	"net"
	"os"
)

func createSocket(addr, path string, mode fs.FileMode) (*net.UnixListener, os.FileInfo, error) {
	return createSocketLinked(addr, path, mode)
}
