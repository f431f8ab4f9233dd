//go:build linux

// Package shmring is a single-producer, single-consumer ring of byte
// records in a sealed memfd that two processes map, with wake-ups through
// eventfds read by Go's netpoller: the shared memory under localgrpc's
// shm: transport.
//
// The producer creates the ring and its two eventfds (data, for the
// consumer to wait on; space, for the producer) and passes the three
// descriptors to the consumer, which checks the memfd's seals and size
// before it maps it. Only indices and bytes live in the memory, never a
// Go pointer.
//
// Each side trusts nothing the other wrote there: the consumer loads the
// tail once, checks it against its own head and the capacity, and copies
// every record out before anyone parses it; the producer checks the head
// it loads against its own tail. A peer that writes garbage makes the
// ring report an error, never a panic, a hang or a read outside it.
//
// A consumer that is about to sleep says so in the header; a producer
// writes the data eventfd only then, so a burst of records costs one
// wake-up. Go's atomics are sequentially consistent: the consumer sets
// its flag and looks at the tail again, the producer publishes the tail
// and looks at the flag, and one of them sees the other.
package shmring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The header's fields, each on a cache line of its own, in the first
// page; records follow from dataOffset.
const (
	offTail     = 0   // producer: bytes ever written
	offHead     = 64  // consumer: bytes ever taken
	offSleeping = 128 // consumer: 1 while it waits, or is about to
	offWaiting  = 192 // producer: 1 while it waits for space
	dataOffset  = 4096
)

// recordHeader is each record's length, little-endian.
const recordHeader = 4

// seals are what a ring's memfd must carry: its size is fixed for good.
const seals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// ErrCorrupt is returned when the peer wrote indices or lengths no
// producer or consumer of the ring could have.
var ErrCorrupt = errors.New("shmring: the peer wrote an impossible index or length")

// segment is a mapped ring.
type segment struct {
	mem  []byte
	size uint64 // of the data area, a power of two
}

func (s *segment) word64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&s.mem[off])) }
func (s *segment) word32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&s.mem[off])) }
func (s *segment) data() []byte           { return s.mem[dataOffset:] }

func (s *segment) unmap() error { return unix.Munmap(s.mem) }

// Fds are the descriptors a producer passes to its consumer.
type Fds struct {
	Mem, Data, Space int
}

// newSegment creates a sealed memfd of a ring of size bytes and maps it.
func newSegment(size uint64) (*segment, int, error) {
	if size < 1<<12 || size&(size-1) != 0 || size > 1<<30 {
		return nil, -1, fmt.Errorf("shmring: a ring of %d bytes: want a power of two from 4 KiB to 1 GiB", size)
	}
	fd, err := unix.MemfdCreate("localgrpc-shm", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, -1, fmt.Errorf("shmring: memfd_create: %w", err)
	}
	total := int64(dataOffset + size)
	if err := unix.Ftruncate(fd, total); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("shmring: sizing the memfd: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("shmring: sealing the memfd: %w", err)
	}
	s, err := mapSegment(fd, size)
	if err != nil {
		unix.Close(fd)
		return nil, -1, err
	}
	return s, fd, nil
}

// openSegment maps the ring of a memfd a peer passed, once its seals and
// size say that the peer can neither shrink it under us nor grow it.
func openSegment(fd int, size uint64) (*segment, error) {
	got, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("shmring: the peer's memfd: %w", err)
	}
	if got&seals != seals {
		return nil, fmt.Errorf("shmring: the peer's memfd is not sealed against shrinking and growing (seals %#x)", got)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("shmring: the peer's memfd: %w", err)
	}
	if st.Size != int64(dataOffset+size) {
		return nil, fmt.Errorf("shmring: the peer's memfd holds %d bytes, want %d", st.Size, dataOffset+size)
	}
	return mapSegment(fd, size)
}

func mapSegment(fd int, size uint64) (*segment, error) {
	mem, err := unix.Mmap(fd, 0, int(dataOffset+size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shmring: mapping the memfd: %w", err)
	}
	return &segment{mem: mem, size: size}, nil
}

// newEventfd is a nonblocking eventfd, read and written through Go's
// netpoller.
func newEventfd() (*os.File, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("shmring: eventfd: %w", err)
	}
	return os.NewFile(uintptr(fd), "eventfd"), nil
}

// eventfdOf takes a peer's eventfd: it must be one, nonblocking.
func eventfdOf(fd int) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("shmring: the peer's eventfd: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("shmring: the peer's eventfd: %w", err)
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err == nil && link != "anon_inode:[eventfd]" {
		return nil, fmt.Errorf("shmring: the peer passed %s for an eventfd", link)
	}
	return os.NewFile(uintptr(fd), "eventfd"), nil
}

var one = binary.LittleEndian.AppendUint64(nil, 1)

// signal wakes whoever waits on f. A full counter (never, in practice)
// means a wake-up is pending anyway.
func signal(f *os.File) error {
	_, err := f.Write(one)
	if errors.Is(err, unix.EAGAIN) {
		return nil
	}
	return err
}

// wait waits until f is signalled, and resets it.
func wait(f *os.File) error {
	var b [8]byte
	_, err := f.Read(b[:])
	return err
}

func load64(p *uint64) uint64     { return atomic.LoadUint64(p) }
func store64(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
