//go:build linux

package shmring

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pass hands p's descriptors to a consumer, as SCM_RIGHTS would: as
// copies of them.
func pass(t testing.TB, p *Producer) Fds {
	t.Helper()
	var fds Fds
	err := p.Pass(func(f Fds) error {
		var err error
		if fds.Mem, err = unix.Dup(f.Mem); err != nil {
			return err
		}
		if fds.Data, err = unix.Dup(f.Data); err != nil {
			return err
		}
		fds.Space, err = unix.Dup(f.Space)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fds
}

func pair(t testing.TB, size uint64) (*Producer, *Consumer) {
	t.Helper()
	p, err := NewProducer(size)
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenConsumer(pass(t, p), size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		c.Release()
		p.Close()
	})
	return p, c
}

// TestRecordsWholeAndInOrder writes 10,000 records of random sizes through
// a 4 KiB ring, full most of the time and wrapping at every size, with a
// checksum in each: every one arrives whole, once, in order.
func TestRecordsWholeAndInOrder(t *testing.T) {
	p, c := pair(t, 4096)
	const n = 10000
	errc := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range n {
			b := make([]byte, 8+rng.IntN(p.MaxRecord()-8))
			for j := 8; j < len(b); j++ {
				b[j] = byte(rng.Uint32())
			}
			binary.LittleEndian.PutUint32(b, uint32(i))
			binary.LittleEndian.PutUint32(b[4:], crc32.ChecksumIEEE(b[8:]))
			if err := p.Write(nil, b, nil); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for i := range n {
		b, err := c.Read()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got := binary.LittleEndian.Uint32(b); got != uint32(i) {
			t.Fatalf("record %d arrived as %d", i, got)
		}
		if crc32.ChecksumIEEE(b[8:]) != binary.LittleEndian.Uint32(b[4:]) {
			t.Fatalf("record %d arrived changed", i)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestTooLarge(t *testing.T) {
	p, _ := pair(t, 4096)
	if err := p.Write(nil, make([]byte, p.MaxRecord()+1), nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a record over MaxRecord: %v", err)
	}
}

// TestAbortWhileFull: a writer waiting for room gives up once told to.
func TestAbortWhileFull(t *testing.T) {
	p, _ := pair(t, 4096)
	abort := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		for {
			if err := p.Write(nil, make([]byte, 1000), abort); err != nil {
				errc <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	close(abort)
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("the aborted Write: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Write waiting for room did not give up")
	}
}

// endWaitingRead has end, called what, end a Read of c that waits for a
// record, and fails t unless the Read returns want.
func endWaitingRead(t *testing.T, c *Consumer, what string, end func(), want error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read()
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	end()
	select {
	case err := <-errc:
		if !errors.Is(err, want) {
			t.Fatalf("a Read ended by %s: %v, want %v", what, err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not end a waiting Read", what)
	}
}

// TestCloseEndsRead: Close ends a Read that waits for a record.
func TestCloseEndsRead(t *testing.T) {
	p, err := NewProducer(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := OpenConsumer(pass(t, p), 4096)
	if err != nil {
		t.Fatal(err)
	}
	endWaitingRead(t, c, "Close", func() { c.Close() }, ErrClosed)
	c.Release()
}

// TestInterruptEndsRead: Interrupt ends a Read that waits with
// ErrInterrupted, once; a record written before a Read comes first.
func TestInterruptEndsRead(t *testing.T) {
	p, c := pair(t, 4096)
	endWaitingRead(t, c, "Interrupt", c.Interrupt, ErrInterrupted)
	if err := p.Write([]byte("r"), nil, nil); err != nil {
		t.Fatal(err)
	}
	c.Interrupt()
	if rec, err := c.Read(); err != nil || string(rec) != "r" {
		t.Fatalf("Read after a record and an Interrupt: %q, %v; want the record", rec, err)
	}
	if _, err := c.Read(); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("the next Read: %v, want ErrInterrupted", err)
	}
}

// TestRefusesWhatIsNotARing: a memfd without seals, or of another size,
// and a descriptor that is not an eventfd are refused.
func TestRefusesWhatIsNotARing(t *testing.T) {
	p, err := NewProducer(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	unsealed, err := unix.MemfdCreate("unsealed", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	unix.Ftruncate(unsealed, dataOffset+4096)
	fds := pass(t, p)
	unix.Close(fds.Mem)
	fds.Mem = unsealed
	if _, err := OpenConsumer(fds, 4096); err == nil {
		t.Error("an unsealed memfd was taken")
	}
	if _, err := OpenConsumer(pass(t, p), 8192); err == nil {
		t.Error("a memfd of another size was taken")
	}
	fds = pass(t, p)
	r, w, err := pipe()
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(w)
	unix.Close(fds.Data)
	fds.Data = r
	if _, err := OpenConsumer(fds, 4096); err == nil {
		t.Error("a pipe was taken for an eventfd")
	}
}

func pipe() (int, int, error) {
	var fds [2]int
	err := unix.Pipe2(fds[:], unix.O_CLOEXEC)
	return fds[0], fds[1], err
}

// FuzzConsumer has a peer write anything into the ring's memory: the
// consumer returns records or an error, never panics, never reads outside
// the ring.
func FuzzConsumer(f *testing.F) {
	f.Add(uint64(8), []byte{4, 0, 0, 0, 1, 2, 3, 4})
	f.Add(uint64(1<<40), []byte{})
	f.Add(uint64(4100), bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, tail uint64, data []byte) {
		p, c := pair(t, 4096)
		copy(p.seg.data(), data)
		store64(p.seg.word64(offTail), tail)
		if tail == 0 {
			return // an empty ring: Read would wait
		}
		for range 8 {
			b, err := c.Read()
			if err != nil {
				return
			}
			if len(b) > c.max {
				t.Fatalf("a record of %d bytes from a ring that takes %d", len(b), c.max)
			}
			if c.head == tail {
				return
			}
		}
	})
}
