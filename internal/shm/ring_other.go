//go:build !linux

package shm

import "net"

// rings exist on Linux only: elsewhere frames go on the socket.
type rings struct{ in *noRing }

type noRing struct{ Spin int }

func (*noRing) Close() error { return nil }

func ringsPossible(net.Conn) bool { return false }

func exchangeRings(net.Conn, bool) (*rings, error) { panic("shm: no rings on this system") }

func (*rings) write(*conn, []byte) error { panic("shm: no rings on this system") }

func (*rings) readFrames(*conn, func(frame) error) {
	panic("shm: no rings on this system")
}

func (*rings) watch(*conn, func(frame) error) { panic("shm: no rings on this system") }

func (*rings) readOne(*conn, func(frame) error) error { panic("shm: no rings on this system") }

func (*rings) hasRecord() bool { panic("shm: no rings on this system") }

func (*noRing) Interrupt() {}

func (*rings) writeParts(*conn, []byte, []byte, []byte) error { panic("shm: no rings on this system") }

func (*rings) maxRecord() int { panic("shm: no rings on this system") }

func (*rings) writeAside(*conn, []byte) error { panic("shm: no rings on this system") }
