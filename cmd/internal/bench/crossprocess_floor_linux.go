package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/shmring"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
)

// floorRingSize is each floor ring's size: room for any Echo text.
const floorRingSize = 1 << 20

// socketPair is two connected unix stream sockets: this process's and
// the server process's.
func socketPair() (mine, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "socketpair"), os.NewFile(uintptr(fds[1]), "socketpair"), nil
}

// fileConn is f as a net.Conn read through the netpoller; f is closed.
func fileConn(f *os.File) (net.Conn, error) {
	defer f.Close()
	return net.FileConn(f)
}

// floorSocketpairClients is impl "xproc-floor-socketpair": the Echo text
// to the server process and back over a unix socketpair, each side
// reading through Go's netpoller, behind a length.
func floorSocketpairClients(tb testing.TB, _ servers) (clients, error) {
	mine, theirs, err := socketPair()
	if err != nil {
		return clients{}, err
	}
	_, err = startChild(tb, childSpec{Kind: "socketpair"}, theirs)
	theirs.Close()
	if err != nil {
		mine.Close()
		return clients{}, err
	}
	nc, err := fileConn(mine)
	if err != nil {
		return clients{}, err
	}
	tb.Cleanup(func() { nc.Close() })
	return clients{get: &socketFloor{nc: nc}}, nil
}

// socketFloor makes one round trip at a time.
type socketFloor struct {
	mu  sync.Mutex
	nc  net.Conn
	buf []byte
}

func (f *socketFloor) Get(_ context.Context, in *echov1.EchoRequest, _ ...grpc.CallOption) (*echov1.EchoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = binary.LittleEndian.AppendUint32(f.buf[:0], uint32(len(in.GetText())))
	f.buf = append(f.buf, in.GetText()...)
	if _, err := f.nc.Write(f.buf); err != nil {
		return nil, err
	}
	b, err := readRecord(f.nc, f.buf)
	if err != nil {
		return nil, err
	}
	f.buf = b
	return &echov1.EchoResponse{Text: string(b)}, nil
}

// readRecord reads a length and that many bytes into buf's array.
func readRecord(r io.Reader, buf []byte) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int(binary.LittleEndian.Uint32(n[:]))
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// serveFloorSocketpair echoes the records of descriptor 3, a socketpair.
func serveFloorSocketpair() (func(), error) {
	nc, err := fileConn(os.NewFile(3, "socketpair"))
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []byte
		for {
			b, err := readRecord(nc, buf)
			if err != nil {
				return
			}
			out := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
			if _, err := nc.Write(append(out, b...)); err != nil {
				return
			}
			buf = b
		}
	}()
	return func() { nc.Close(); <-done }, nil
}

// floorRingClients is impl "xproc-floor-ring": the Echo text to the
// server process and back through a shared-memory ring each way (the
// rings of shm:, in package shmring), each side waiting for the other's
// eventfd through Go's netpoller. This process's ring goes to the server
// process as its descriptors 3 to 5; the server process's comes back
// over a socketpair, its descriptor 6.
func floorRingClients(tb testing.TB, _ servers) (clients, error) {
	out, err := shmring.NewProducer(floorRingSize)
	if err != nil {
		return clients{}, err
	}
	var files []*os.File
	closeFiles := func() {
		for _, f := range files {
			f.Close()
		}
	}
	err = out.Pass(func(fds shmring.Fds) error {
		for _, fd := range []int{fds.Mem, fds.Data, fds.Space} {
			d, err := unix.Dup(fd)
			if err != nil {
				return err
			}
			files = append(files, os.NewFile(uintptr(d), "ring"))
		}
		return nil
	})
	mine, theirs, perr := socketPair()
	if err == nil {
		err = perr
	}
	if err != nil {
		closeFiles()
		out.Close()
		return clients{}, err
	}
	files = append(files, theirs)
	_, err = startChild(tb, childSpec{Kind: "ring"}, files...)
	closeFiles()
	if err != nil {
		mine.Close()
		out.Close()
		return clients{}, err
	}
	nc, err := fileConn(mine)
	if err != nil {
		out.Close()
		return clients{}, err
	}
	defer nc.Close()
	in, err := takeRing(nc.(*net.UnixConn))
	if err != nil {
		out.Close()
		return clients{}, err
	}
	tb.Cleanup(func() {
		in.Close()
		in.Release()
		out.Close()
	})
	return clients{get: &ringFloor{in: in, out: out}}, nil
}

// takeRing receives a ring's descriptors on uc and maps it.
func takeRing(uc *net.UnixConn) (*shmring.Consumer, error) {
	oob := make([]byte, unix.CmsgSpace(3*4))
	_, oobn, _, _, err := uc.ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		return nil, fmt.Errorf("the server process's ring: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("the server process's ring: %d messages, %v", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 3 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("the server process's ring: %d descriptors, %v", len(fds), err)
	}
	return shmring.OpenConsumer(shmring.Fds{Mem: fds[0], Data: fds[1], Space: fds[2]}, floorRingSize)
}

// ringFloor makes one round trip at a time.
type ringFloor struct {
	mu  sync.Mutex
	in  *shmring.Consumer
	out *shmring.Producer
	buf []byte
}

func (f *ringFloor) Get(_ context.Context, in *echov1.EchoRequest, _ ...grpc.CallOption) (*echov1.EchoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(f.buf[:0], in.GetText()...)
	if err := f.out.Write(f.buf, nil, nil); err != nil {
		return nil, err
	}
	rec, err := f.in.Read()
	if err != nil {
		return nil, err
	}
	return &echov1.EchoResponse{Text: string(rec)}, nil
}

// serveFloorRing echoes the records of the ring of descriptors 3 to 5
// through a ring of its own, passed back on descriptor 6.
func serveFloorRing() (func(), error) {
	in, err := shmring.OpenConsumer(shmring.Fds{Mem: 3, Data: 4, Space: 5}, floorRingSize)
	if err != nil {
		return nil, err
	}
	nc, err := fileConn(os.NewFile(6, "socketpair"))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	back, err := shmring.NewProducer(floorRingSize)
	if err != nil {
		return nil, err
	}
	err = back.Pass(func(fds shmring.Fds) error {
		_, _, err := nc.(*net.UnixConn).WriteMsgUnix([]byte{0}, unix.UnixRights(fds.Mem, fds.Data, fds.Space), nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			rec, err := in.Read()
			if err != nil {
				return
			}
			if back.Write(rec, nil, nil) != nil {
				return
			}
		}
	}()
	return func() { in.Close(); <-done; in.Release(); back.Close() }, nil
}
