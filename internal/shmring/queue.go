//go:build linux

package shmring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Producer writes records into a ring it created.
type Producer struct {
	seg   *segment
	mem   int      // the memfd, for the consumer
	data  *os.File // written to wake the consumer
	space *os.File // read to wait for the consumer to take records
	tail  uint64   // what we wrote: never read back from the memory
}

// NewProducer creates a ring of size bytes (a power of two) with its
// eventfds.
func NewProducer(size uint64) (*Producer, error) {
	seg, fd, err := newSegment(size)
	if err != nil {
		return nil, err
	}
	data, err := newEventfd()
	if err != nil {
		seg.unmap()
		unix.Close(fd)
		return nil, err
	}
	space, err := newEventfd()
	if err != nil {
		seg.unmap()
		unix.Close(fd)
		data.Close()
		return nil, err
	}
	return &Producer{seg: seg, mem: fd, data: data, space: space}, nil
}

// MaxRecord is the largest record Write takes: a quarter of the ring, so
// that a full ring still frees room for the next one soon.
func (p *Producer) MaxRecord() int { return int(p.seg.size / 4) }

// Pass calls send with the descriptors the consumer needs, valid during
// the call (for a sendmsg with SCM_RIGHTS, say).
func (p *Producer) Pass(send func(Fds) error) error {
	var err error
	cerr := control(p.data, func(data int) {
		cerr := control(p.space, func(space int) {
			err = send(Fds{Mem: p.mem, Data: data, Space: space})
		})
		if err == nil {
			err = cerr
		}
	})
	if err == nil {
		err = cerr
	}
	return err
}

// control calls f with f's descriptor without making it blocking, as
// os.File.Fd would.
func control(f *os.File, fn func(fd int)) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { fn(int(fd)) })
}

// ErrTooLarge is returned by Write for a record over MaxRecord.
var ErrTooLarge = errors.New("shmring: the record is larger than the ring takes")

// ErrClosed is returned once the ring is closed.
var ErrClosed = errors.New("shmring: the ring is closed")

// Write writes a then b as one record, waiting for room until abort is
// closed. It is for one goroutine at a time.
func (p *Producer) Write(a, b []byte, abort <-chan struct{}) error {
	return p.WriteParts(abort, a, b)
}

// WriteParts is Write for a record of any number of parts, copied to the
// ring from where they are.
func (p *Producer) WriteParts(abort <-chan struct{}, parts ...[]byte) error {
	n := 0
	for _, b := range parts {
		n += len(b)
	}
	if n > p.MaxRecord() {
		return ErrTooLarge
	}
	s := p.seg
	need := uint64(recordHeader + n)
	for {
		free, err := p.free()
		if err != nil {
			return err
		}
		if free >= need {
			break
		}
		// Full: say so, look again, and wait to be told of room.
		atomic.StoreUint32(s.word32(offWaiting), 1)
		if free, err = p.free(); err != nil {
			return err
		}
		if free >= need {
			atomic.StoreUint32(s.word32(offWaiting), 0)
			break
		}
		if err := p.awaitSpace(abort); err != nil {
			return err
		}
	}
	var h [recordHeader]byte
	binary.LittleEndian.PutUint32(h[:], uint32(n))
	p.put(h[:])
	for _, b := range parts {
		p.put(b)
	}
	store64(s.word64(offTail), p.tail)
	if atomic.LoadUint32(s.word32(offSleeping)) == 1 && atomic.CompareAndSwapUint32(s.word32(offSleeping), 1, 0) {
		return signal(p.data)
	}
	return nil
}

// free is the room left, from the head the consumer published.
func (p *Producer) free() (uint64, error) {
	head := load64(p.seg.word64(offHead))
	used := p.tail - head
	if head > p.tail || used > p.seg.size {
		return 0, ErrCorrupt
	}
	return p.seg.size - used, nil
}

// awaitSpace waits for the consumer's signal, looking at abort now and
// then: an eventfd read cannot wait for a channel too.
func (p *Producer) awaitSpace(abort <-chan struct{}) error {
	for {
		select {
		case <-abort:
			return ErrClosed
		default:
		}
		p.space.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		err := wait(p.space)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if free, ferr := p.free(); ferr != nil || free > 0 {
			return ferr // some room: Write looks again
		}
	}
}

// put copies b to the ring at the tail, across its end if it must.
func (p *Producer) put(b []byte) {
	d := p.seg.data()
	at := p.tail & (p.seg.size - 1)
	n := copy(d[at:], b)
	copy(d, b[n:])
	p.tail += uint64(len(b))
}

// Close releases the producer's side; no Write may run. The consumer's
// Read then waits until its own Close: the socket beside the ring says
// the peer left.
func (p *Producer) Close() error {
	p.data.Close()
	p.space.Close()
	unix.Close(p.mem)
	return p.seg.unmap()
}

// Consumer reads the records of a ring a peer created.
type Consumer struct {
	seg   *segment
	data  *os.File // read to wait for records
	space *os.File // written to wake a producer waiting for room
	head  uint64   // what we took: never read back from the memory
	max   int
	buf   []byte
	// hungUp is set by Hangup; closed by Close; interrupted by Interrupt
	// until a Read returns ErrInterrupted.
	hungUp      atomic.Bool
	closed      atomic.Bool
	interrupted atomic.Bool
	// dataConn waits for data to be signalled without reading it (see
	// Read); looked is the test it applies, made once.
	dataConn syscall.RawConn
	looked   func(uintptr) bool
	// Spin, if above 0, is how many times Read looks for a record before
	// it sleeps: for machines with idle cores, where a spinning reader
	// starves no one.
	Spin int
}

// OpenConsumer maps the ring of fds, which the peer's Producer of size
// bytes passed; it takes the descriptors (closing them on error).
func OpenConsumer(fds Fds, size uint64) (*Consumer, error) {
	fail := func(err error) (*Consumer, error) {
		unix.Close(fds.Mem)
		unix.Close(fds.Data)
		unix.Close(fds.Space)
		return nil, err
	}
	seg, err := openSegment(fds.Mem, size)
	if err != nil {
		return fail(err)
	}
	unix.Close(fds.Mem) // the mapping keeps the memory
	fds.Mem = -1
	data, err := eventfdOf(fds.Data)
	if err != nil {
		seg.unmap()
		unix.Close(fds.Space)
		unix.Close(fds.Data)
		return nil, err
	}
	space, err := eventfdOf(fds.Space)
	if err != nil {
		seg.unmap()
		data.Close()
		unix.Close(fds.Space)
		return nil, err
	}
	rc, err := data.SyscallConn()
	if err != nil {
		seg.unmap()
		data.Close()
		space.Close()
		return nil, fmt.Errorf("shmring: the peer's eventfd: %w", err)
	}
	c := &Consumer{seg: seg, data: data, space: space, max: int(size / 4), dataConn: rc}
	// looked is RawConn.Read's test, made before each wait: true once
	// there is something to return. The producer clears offSleeping as
	// it signals, so it is said again before each wait, then the ring
	// looked at: a wake-up for a record already taken would otherwise
	// leave the consumer waiting for a signal that never comes. The
	// eventfd's counter is never read: each write wakes the
	// edge-triggered netpoller whatever the count, where a read would
	// cost os.File.Read's two system calls a wake-up (EAGAIN, then the
	// count). An honest producer cannot fill it (2^64 wake-ups).
	sleeping := seg.word32(offSleeping)
	c.looked = func(uintptr) bool {
		atomic.StoreUint32(sleeping, 1)
		return c.HasRecord() || c.hungUp.Load() || c.interrupted.Load()
	}
	return c, nil
}

// ErrInterrupted is returned by a Read that Interrupt ended with no record.
var ErrInterrupted = errors.New("shmring: the read was interrupted")

// Interrupt ends a Read that waits, or the next one, with ErrInterrupted
// unless it finds a record. It may be called from any goroutine.
func (c *Consumer) Interrupt() {
	c.interrupted.Store(true)
	signal(c.data)
}

// HasRecord says whether the producer published something unread: a
// Read would return it without waiting. It is for the goroutine that
// reads.
func (c *Consumer) HasRecord() bool {
	return load64(c.seg.word64(offTail)) != c.head
}

// ErrHungUp is returned by Read once Hangup was called and every record
// the producer wrote was read.
var ErrHungUp = errors.New("shmring: the producer hung up")

// Hangup says the producer is gone (its socket closed, say): Read returns
// the records it wrote, then ErrHungUp rather than wait for more. It may
// be called from any goroutine.
func (c *Consumer) Hangup() {
	c.hungUp.Store(true)
	signal(c.data)
}

// Read returns the next record, waiting for one; it is valid until the
// next Read. It is for one goroutine at a time; Close ends a Read.
func (c *Consumer) Read() ([]byte, error) {
	s := c.seg
	spun := 0
	for {
		tail := load64(s.word64(offTail))
		if tail < c.head || tail-c.head > s.size {
			return nil, ErrCorrupt
		}
		if tail != c.head {
			return c.take(tail - c.head)
		}
		// Hung up: the tail loaded after the flag was set is the last.
		if c.hungUp.Load() && load64(s.word64(offTail)) == c.head {
			return nil, ErrHungUp
		}
		if c.interrupted.Swap(false) {
			return nil, ErrInterrupted
		}
		if spun < c.Spin {
			spun++
			continue
		}
		// The producer signals only a consumer that said it sleeps, and
		// looks for that after it published (see looked).
		err := c.dataConn.Read(c.looked)
		atomic.StoreUint32(s.word32(offSleeping), 0)
		if err != nil {
			if c.closed.Load() {
				return nil, ErrClosed
			}
			return nil, err
		}
		spun = 0
	}
}

// take copies out the record at the head, of the avail bytes published.
func (c *Consumer) take(avail uint64) ([]byte, error) {
	var h [recordHeader]byte
	if avail < recordHeader {
		return nil, ErrCorrupt // a producer publishes whole records
	}
	c.get(h[:])
	n := uint64(binary.LittleEndian.Uint32(h[:]))
	if n > avail-recordHeader || n > uint64(c.max) {
		return nil, ErrCorrupt
	}
	if uint64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	c.get(b)
	store64(c.seg.word64(offHead), c.head)
	if atomic.LoadUint32(c.seg.word32(offWaiting)) == 1 && atomic.CompareAndSwapUint32(c.seg.word32(offWaiting), 1, 0) {
		if err := signal(c.space); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// get copies len(b) bytes from the head, across the ring's end if it
// must.
func (c *Consumer) get(b []byte) {
	d := c.seg.data()
	at := c.head & (c.seg.size - 1)
	n := copy(b, d[at:])
	copy(b[n:], d)
	c.head += uint64(len(b))
}

// Close ends a Read in progress, which returns ErrClosed, and any later
// one. The goroutine that reads calls Release once it stopped.
func (c *Consumer) Close() error {
	c.closed.Store(true)
	c.space.Close()
	return c.data.Close()
}

// Release unmaps the ring, once Close was called and no Read runs.
func (c *Consumer) Release() error { return c.seg.unmap() }
