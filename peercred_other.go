//go:build !linux

package localgrpc

import (
	"errors"
	"net"
)

var errNoPeerCred = errors.New("peer credentials are not supported on this system")

func readPeerCred(net.Conn) (PeerCred, error) { return PeerCred{}, errNoPeerCred }
