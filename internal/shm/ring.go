//go:build linux

package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/localgrpc/localgrpc/internal/shmring"
	"github.com/localgrpc/localgrpc/internal/shmwire"
	"golang.org/x/sys/unix"
)

// ringSize is the bytes of each direction's ring: a record takes up to a
// quarter, which holds a frame of maxFrame with room to spare.
const ringSize = 1 << 20

// Kinds of record, the first byte of each.
const (
	recordFrames byte = iota // whole frames
	recordSocket             // the next N bytes of frames are on the socket
)

// kindFrames begins a record of whole frames.
var kindFrames = []byte{recordFrames}

// rings are a connection's two rings: ours to write, the peer's to read.
type rings struct {
	out *shmring.Producer
	// outClosed, under the connection's wmu, says out was released: no
	// write may touch its memory.
	outClosed bool
	in        *shmring.Consumer
	// sock carries the frames the peer sent on the socket, for a
	// recordSocket to take in order; it closes once the socket failed,
	// with sockErr.
	sock    chan frame
	sockErr error
	// sockDone is closed once the socket's reader ended.
	sockDone chan struct{}
	// readOnNext is readOn with its arguments, made once: what a reader
	// that runs a call hands the reading to.
	readOnNext func()
}

// ringsPossible says whether nc can pass a ring's descriptors.
func ringsPossible(nc net.Conn) bool {
	_, ok := nc.(*net.UnixConn)
	return ok
}

// ringOffer is the message that carries a side's ring: its size, with
// the memfd and the two eventfds as SCM_RIGHTS.
const ringOffer = "RING"

// exchangeRings gives the peer a ring to read and takes one to write:
// the client first, then the server.
func exchangeRings(nc net.Conn, client bool) (*rings, error) {
	uc := nc.(*net.UnixConn)
	out, err := shmring.NewProducer(ringSize)
	if err != nil {
		return nil, err
	}
	var in *shmring.Consumer
	if client {
		err = offerRing(uc, out)
		if err == nil {
			in, err = takeRing(uc)
		}
	} else {
		in, err = takeRing(uc)
		if err == nil {
			err = offerRing(uc, out)
		}
	}
	if err != nil {
		out.Close()
		if in != nil {
			in.Close()
			in.Release()
		}
		return nil, err
	}
	return &rings{out: out, in: in, sock: make(chan frame, 16)}, nil
}

func offerRing(uc *net.UnixConn, out *shmring.Producer) error {
	msg := binary.BigEndian.AppendUint64([]byte(ringOffer), ringSize)
	return out.Pass(func(fds shmring.Fds) error {
		_, _, err := uc.WriteMsgUnix(msg, unix.UnixRights(fds.Mem, fds.Data, fds.Space), nil)
		if err != nil {
			return fmt.Errorf("shm: passing the ring: %w", err)
		}
		return nil
	})
}

// takeRing reads the peer's ring offer and maps its ring.
func takeRing(uc *net.UnixConn) (*shmring.Consumer, error) {
	msg := make([]byte, len(ringOffer)+8)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(msg, oob)
	if err != nil {
		return nil, fmt.Errorf("shm: reading the peer's ring: %w", err)
	}
	var fds []int
	if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range cmsgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	closeAll := func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	for n < len(msg) && err == nil {
		var m int
		m, err = uc.Read(msg[n:])
		n += m
	}
	switch {
	case err != nil:
		closeAll()
		return nil, fmt.Errorf("shm: reading the peer's ring: %w", err)
	case string(msg[:len(ringOffer)]) != ringOffer || len(fds) != 3:
		closeAll()
		return nil, errors.New("shm: the peer's ring offer is malformed")
	}
	size := binary.BigEndian.Uint64(msg[len(ringOffer):])
	if size != ringSize {
		closeAll()
		return nil, fmt.Errorf("shm: the peer offers a ring of %d bytes, want %d", size, ringSize)
	}
	return shmring.OpenConsumer(shmring.Fds{Mem: fds[0], Data: fds[1], Space: fds[2]}, size)
}

// write writes b, whole frames, through the ring, or when the ring cannot
// take it on the socket, with a record saying so in its place.
func (r *rings) write(c *conn, b []byte) error {
	if r.closed(c) {
		return net.ErrClosed
	}
	if len(b)+1 <= r.out.MaxRecord() {
		return r.out.Write(kindFrames, b, c.failed)
	}
	return r.writeAside(c, b)
}

// writeAside writes b, whole frames, on the socket, behind a record that
// says how many bytes to take from there.
func (r *rings) writeAside(c *conn, b []byte) error {
	if r.closed(c) {
		return net.ErrClosed
	}
	var marker [9]byte
	marker[0] = recordSocket
	binary.BigEndian.PutUint64(marker[1:], uint64(len(b)))
	if err := r.out.Write(marker[:], nil, c.failed); err != nil {
		return err
	}
	_, err := c.nc.Write(b)
	return err
}

// closed says whether the ring takes no more records: once the connection
// failed, what a writer still has goes nowhere, as on a closed socket,
// though the peer would read the ring's records before its hang-up.
func (r *rings) closed(c *conn) bool {
	if r.outClosed {
		return true
	}
	select {
	case <-c.failed:
		return true
	default:
		return false
	}
}

// writeParts is write for a head, payload and tail of whole frames
// together: the payload is not copied before it reaches the ring or the
// socket.
func (r *rings) writeParts(c *conn, head, payload, tail []byte) error {
	if r.closed(c) {
		return net.ErrClosed
	}
	n := len(head) + len(payload) + len(tail)
	if n+1 <= r.out.MaxRecord() {
		return r.out.WriteParts(c.failed, kindFrames, head, payload, tail)
	}
	var marker [9]byte
	marker[0] = recordSocket
	binary.BigEndian.PutUint64(marker[1:], uint64(n))
	if err := r.out.Write(marker[:], nil, c.failed); err != nil {
		return err
	}
	bufs := net.Buffers{head, payload, tail}
	_, err := bufs.WriteTo(c.nc)
	return err
}

// readFrames reads the ring's records, and the socket's frames where a
// record says, until the connection fails; then it ends the reading (see
// conn.readEnded), or the goroutine it hands the reading to does (see
// readOn).
func (r *rings) readFrames(c *conn, on func(frame) error) {
	r.sockDone = make(chan struct{})
	go func() {
		defer close(r.sockDone)
		r.readSocket(c)
	}()
	r.readOnNext = func() { r.readOn(c, on) }
	r.readOn(c, on)
}

// readOn reads records until the connection fails. After a record, a
// call that c.inline gives runs on this goroutine, once c.spawn has
// another read on: the call's handler then runs on the goroutine the
// netpoller woke, with no hand-off to wait for.
func (r *rings) readOn(c *conn, on func(frame) error) {
	for {
		if err := r.readOne(c, on); err != nil {
			c.fail(err)
			if c.inline != nil {
				for call := c.inline(); call != nil; call = c.inline() {
					c.spawn(call) // they find the connection failed
				}
			}
			<-r.sockDone
			r.release(c)
			c.readEnded()
			return
		}
		if c.inline != nil {
			if call := c.inline(); call != nil {
				c.spawn(r.readOnNext)
				call()
				return
			}
		}
	}
}

// watch is readFrames for a connection whose callers read the ring
// themselves (see pump): it reads the socket until it fails, then takes
// the pump's tok for good and reads what the peer wrote to the ring
// before it left, until the connection fails.
func (r *rings) watch(c *conn, on func(frame) error) {
	r.readSocket(c)
	c.pump.tok <- struct{}{} // a caller reading sees the hang-up, or the failure, and lets go
	defer r.release(c)
	for {
		if err := r.readOne(c, on); err != nil {
			c.fail(err)
			return
		}
	}
}

// release unmaps the rings once nothing reads them.
func (r *rings) release(c *conn) {
	r.in.Release()
	c.wmu.Lock()
	r.out.Close()
	r.outClosed = true
	c.wmu.Unlock()
}

// readOne reads a record and hands its frames to on. A read that
// Interrupt ended is no error. Any error ends the connection.
func (r *rings) readOne(c *conn, on func(frame) error) error {
	rec, err := r.in.Read()
	if err == nil {
		err = r.onRecord(c, rec, on)
	}
	switch {
	case err == nil, errors.Is(err, shmring.ErrInterrupted):
		return nil
	case errors.Is(err, shmring.ErrClosed):
		return net.ErrClosed
	case errors.Is(err, shmring.ErrHungUp):
		return r.sockErr // set before the hang-up
	}
	return err
}

// maxRecord is the most a record we write holds, its kind included.
func (r *rings) maxRecord() int { return r.out.MaxRecord() }

// hasRecord says whether the ring holds a record not read yet; for the
// goroutine that may read.
func (r *rings) hasRecord() bool { return r.in.HasRecord() }

// readSocket reads the frames the peer sent on the socket until it fails,
// which ends the connection: the socket says when the peer left. A peer
// that closed its socket wrote its last frames to the ring before: they
// are read before the connection ends, with the socket's error.
func (r *rings) readSocket(c *conn) {
	defer close(r.sock)
	for {
		h, p, owned, err := c.r.ReadFrame()
		var opErr *net.OpError
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &opErr):
			r.sockErr = err
			r.in.Hangup()
			return
		case err != nil:
			c.fail(err) // the peer broke the framing: nothing more it wrote counts
			return
		}
		if !owned {
			p = append([]byte(nil), p...)
		}
		if c.aside != nil {
			c.aside(frame{h, p, true})
		}
		select {
		case r.sock <- frame{h, p, true}:
		case <-c.failed:
			return
		}
	}
}

func (r *rings) onRecord(c *conn, rec []byte, on func(frame) error) error {
	if len(rec) == 0 {
		return errFrom("an empty ring record")
	}
	switch rec[0] {
	case recordFrames:
		rec = rec[1:]
		for len(rec) > 0 {
			h, err := shmwire.ParseHeader(rec, maxFrame)
			if err != nil {
				return err
			}
			if uint64(len(rec)-shmwire.HeaderLen) < uint64(h.Length) {
				return errFrom("a ring record ends inside a frame")
			}
			p := rec[shmwire.HeaderLen : shmwire.HeaderLen+int(h.Length)]
			rec = rec[shmwire.HeaderLen+int(h.Length):]
			if err := on(frame{h, p, false}); err != nil {
				return err
			}
		}
		return nil
	case recordSocket:
		if len(rec) != 9 {
			return errFrom("a malformed ring record")
		}
		n := binary.BigEndian.Uint64(rec[1:])
		for n > 0 {
			var f frame
			var ok bool
			select {
			case f, ok = <-r.sock:
				if !ok {
					return io.ErrUnexpectedEOF // the socket ended before the frames it was to carry
				}
			case <-c.failed:
				return net.ErrClosed
			}
			size := uint64(shmwire.HeaderLen) + uint64(len(f.p))
			if size > n {
				return errFrom("the socket's frames overrun the ring's record of them")
			}
			n -= size
			if err := on(f); err != nil {
				return err
			}
		}
		return nil
	}
	return errFrom("a ring record of kind %d", rec[0])
}
