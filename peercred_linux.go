package localgrpc

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// readPeerCred reads the credentials of the process at the other end of
// c, a unix socket connection.
func readPeerCred(c net.Conn) (PeerCred, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return PeerCred{}, errors.New("the connection gives no access to its socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return PeerCred{}, err
	}
	var cred *unix.Ucred
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		cred, sockErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return PeerCred{}, err
	}
	if sockErr != nil {
		return PeerCred{}, sockErr
	}
	return PeerCred{UID: cred.Uid, GID: cred.Gid, PID: cred.Pid}, nil
}
