package shm

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"

	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Limits a side grants its peer in its hello.
const (
	maxFrame     = 1 << 20   // the largest payload a frame may carry to us
	streamWindow = 1 << 20   // the bytes a stream may send us ahead of our reading
	connWindow   = 1<<31 - 1 // not enforced yet: streams bound what we hold
)

func ourHello(nc net.Conn) shmwire.Hello {
	h := shmwire.Hello{Version: shmwire.Version, Features: shmwire.FeatureSized, MaxFrame: maxFrame, Window: streamWindow, ConnWin: connWindow}
	if ringsPossible(nc) {
		h.Features |= shmwire.FeatureRings
	}
	return h
}

// conn is what both sides of a connection share: the socket, its writer,
// the streams and the goroutine that reads frames for them.
type conn struct {
	nc   net.Conn
	peer shmwire.Hello
	r    *shmwire.Reader

	// wmu serializes writes; whole frames, and a message's frames with
	// their headers, go out in one Write.
	wmu  sync.Mutex
	wbuf []byte

	// ctrl holds frames the reading goroutine wants written (window
	// credit, resets): it never writes itself, so that two peers that
	// both wait to write cannot stop each other's reading. ctrlWake wakes
	// the goroutine that writes them.
	ctrlMu   sync.Mutex
	ctrl     []byte
	ctrlWake chan struct{}

	// frameMax is the most a Message frame we send carries: the peer's
	// limit, and with rings what a record holds beside a small frame
	// before and after it, so that a large message crosses through the
	// ring, not the socket. sized says the peer takes Sized frames.
	frameMax int
	sized    bool

	// rings, when both sides offered them, carry the frames; the socket
	// then carries only what a ring cannot take, and says when the peer
	// left.
	rings *rings
	// server is set on a server's side of a connection.
	server bool
	// pump, on a client's side with rings, has the callers read the ring
	// (see pump); pumpOn is what they hand its frames to.
	pump   *pump
	pumpOn func(frame) error
	// inline, on a server's side with rings, gives the reader a call to
	// run itself once spawn has another goroutine read on (see
	// rings.readOn); nil when none waits.
	inline func() func()
	spawn  func(func())
	// aside, when set, sees each frame read from the socket as it is
	// read, before its turn comes (see Client.aside).
	aside func(frame)
	// onEnded is called once the reading ended, after done closed.
	onEnded func()

	mu      sync.Mutex
	streams map[uint32]*stream
	err     error // why the connection ended; set once
	// failed is closed as err is set; done once the reading stopped.
	failed chan struct{}
	done   chan struct{}
}

// Options tune a side of a connection.
type Options struct {
	// Spin is how many times the reader of a ring looks for a record
	// before it sleeps: for machines with idle cores. It applies only
	// where GOMAXPROCS is above 2, where a spinning reader cannot starve
	// the goroutine it waits for.
	Spin int
}

// spin is o.Spin where it applies.
func (o Options) spin() int {
	if runtime.GOMAXPROCS(0) <= 2 {
		return 0
	}
	return max(o.Spin, 0)
}

// setup speaks the hello on nc, and sets up the rings if both sides
// offer them.
func setup(nc net.Conn, client bool, o Options) (*conn, error) {
	peer, err := handshake(nc, client)
	if err != nil {
		return nil, err
	}
	c := &conn{
		nc:       nc,
		peer:     peer,
		r:        shmwire.NewReader(nc, maxFrame),
		streams:  map[uint32]*stream{},
		ctrlWake: make(chan struct{}, 1),
		failed:   make(chan struct{}),
		done:     make(chan struct{}),
		server:   !client,
	}
	_, features := shmwire.Agree(ourHello(nc), peer)
	c.sized = features&shmwire.FeatureSized != 0
	c.frameMax = int(peer.MaxFrame)
	if features&shmwire.FeatureRings != 0 {
		if c.rings, err = exchangeRings(nc, client); err != nil {
			return nil, err
		}
		c.frameMax = min(c.frameMax, c.rings.maxRecord()-ringFrameSlack)
		c.rings.in.Spin = o.spin()
		if client {
			c.pump = newPump(c.rings.in.Interrupt)
		}
	}
	return c, nil
}

// handshake sends our hello and reads the peer's: the client speaks
// first, and the server answers only a client that spoke the framing, so
// that a client of another protocol reads nothing of it (see
// ErrHTTP2 in Serve).
func handshake(nc net.Conn, client bool) (shmwire.Hello, error) {
	if client {
		if err := shmwire.WriteHello(nc, ourHello(nc)); err != nil {
			return shmwire.Hello{}, fmt.Errorf("shm: writing the hello: %w", err)
		}
	}
	peer, err := shmwire.ReadHello(nc)
	if err != nil {
		if client && errors.Is(err, io.EOF) {
			err = fmt.Errorf("shm: the server closed the connection during the hello (is it a localgrpc server's shm: address?): %w", err)
		}
		return peer, err
	}
	if !client {
		if err := shmwire.WriteHello(nc, ourHello(nc)); err != nil {
			return shmwire.Hello{}, fmt.Errorf("shm: writing the hello: %w", err)
		}
	}
	return peer, nil
}

// fail ends the connection with err: every stream ends with Unavailable,
// and the socket closes, which ends the peer's side too.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	streams := c.streams
	c.streams = map[uint32]*stream{}
	close(c.failed)
	c.mu.Unlock()
	c.nc.Close()
	if c.rings != nil {
		c.rings.in.Close() // ends the ring's reader
	}
	st := status.New(codes.Unavailable, connClosedMessage(err))
	for _, s := range streams {
		s.push(event{kind: evReset, st: st, conn: true})
	}
}

func connClosedMessage(err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return "shm: the connection closed"
	}
	return "shm: the connection failed: " + err.Error()
}

// writeAside writes b, whole frames, as write does, but with rings on the
// socket behind a record that says so: a client's socket reader sees
// them even while no call reads the ring (see Client.aside).
func (c *conn) writeAside(b []byte) error {
	if c.rings == nil {
		return c.write(b)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	err := c.rings.writeAside(c, b)
	if err != nil {
		c.fail(err)
	}
	return err
}

// write writes b, whole frames, to the socket.
func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(b)
}

func (c *conn) writeLocked(b []byte) error {
	var err error
	if c.rings != nil {
		err = c.rings.write(c, b)
	} else {
		_, err = c.nc.Write(b)
	}
	if err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// frame is a frame as read: its payload is the handler's to keep if
// owned, else valid only during the call.
type frame struct {
	h     shmwire.Header
	p     []byte
	owned bool
}

// largeWrite is the size from which a payload is written to the socket
// from where it is rather than copied behind its frame's header first.
const largeWrite = 64 << 10

// ringFrameSlack is what a ring's record holds beside a Message frame of
// frameMax: the record's kind, a small frame before (the call's Headers)
// and one after (its Trailers or End).
const ringFrameSlack = 8 << 10

// writeParts writes head, payload and tail, whole frames together, as
// writeLocked writes one buffer; c.wmu is held. head is in c.wbuf.
func (c *conn) writeParts(head, payload, tail []byte) error {
	var err error
	switch {
	case c.rings != nil:
		err = c.rings.writeParts(c, head, payload, tail)
	case len(payload) < largeWrite:
		b := append(append(head, payload...), tail...)
		err = c.writeLocked(b)
		c.wbuf = b[:0]
		return err
	default:
		bufs := net.Buffers{head, payload, tail}
		_, err = bufs.WriteTo(c.nc)
	}
	c.wbuf = head[:0]
	if err != nil {
		c.fail(err)
	}
	return err
}

// readFrames hands every frame the peer sends to on, until the
// connection fails; then it ends the reading (see readEnded).
func (c *conn) readFrames(on func(frame) error) {
	switch {
	case c.pump != nil:
		c.rings.watch(c, on)
	case c.rings != nil:
		c.rings.readFrames(c, on) // ends the reading itself
		return
	default:
		for {
			h, p, owned, err := c.r.ReadFrame()
			if err == nil {
				err = on(frame{h, p, owned})
			}
			if err != nil {
				c.fail(err)
				break
			}
		}
	}
	c.readEnded()
}

// readEnded closes done, then tells the connection's owner.
func (c *conn) readEnded() {
	close(c.done)
	if c.onEnded != nil {
		c.onEnded()
	}
}

// queueCtrl has the control writer write frame soon.
func (c *conn) queueCtrl(frame []byte) {
	c.ctrlMu.Lock()
	c.ctrl = append(c.ctrl, frame...)
	c.ctrlMu.Unlock()
	select {
	case c.ctrlWake <- struct{}{}:
	default:
	}
}

// writeCtrl writes the queued control frames until the connection ends.
func (c *conn) writeCtrl() {
	var buf []byte
	for {
		select {
		case <-c.ctrlWake:
		case <-c.failed:
			return
		}
		c.ctrlMu.Lock()
		buf, c.ctrl = c.ctrl, buf[:0]
		c.ctrlMu.Unlock()
		if len(buf) > 0 && c.write(buf) != nil {
			return
		}
	}
}

// stream finds the stream of id; nil if it ended or never was.
func (c *conn) stream(id uint32) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[id]
}

func (c *conn) remove(s *stream) {
	c.mu.Lock()
	if c.streams[s.id] == s {
		delete(c.streams, s.id)
	}
	c.mu.Unlock()
}

// onFrame handles the frames every stream takes alike; it reports whether
// it did.
func (c *conn) onFrame(f frame) (bool, error) {
	h, p := f.h, f.p
	switch h.Type {
	case shmwire.Window:
		n, err := shmwire.ParseWindow(p)
		if err != nil {
			return true, err
		}
		if h.Stream == 0 {
			return true, nil // the connection's window is not enforced yet
		}
		if s := c.stream(h.Stream); s != nil {
			s.credit(int64(n))
		}
		return true, nil
	case shmwire.Message:
		s := c.stream(h.Stream)
		if s == nil {
			return true, nil // a stream that ended here: its data is dropped
		}
		if err := s.receive(f); err != nil {
			// The peer broke the stream's rules: the stream, not the
			// connection, ends.
			c.refuse(s, status.New(codes.Internal, err.Error()))
		}
		return true, nil
	}
	return false, nil
}

// refuse ends stream s here with st because of what the peer sent, and
// tells the peer: a server's side sends st as the call's status, a
// client's a cancel.
func (c *conn) refuse(s *stream, st *status.Status) {
	if c.server {
		c.queueCtrl(trailersFrame(s.id, st.Err(), nil))
	} else {
		c.queueCtrl(shmwire.AppendFrame(nil, s.id, shmwire.Cancel, 0, shmwire.AppendCode(nil, st.Code())))
	}
	s.push(event{kind: evReset, st: st, refused: true})
}
