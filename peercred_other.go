//go:build !linux

package localgrpc

import "net"

func readPeerCred(*net.UnixConn) (PeerCred, error) { return PeerCred{}, errNoPeerCred }

const peerCredSupported = false
