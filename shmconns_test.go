package localgrpc

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/shm"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// shmConnPair is a served shm: connection over a socket pair, its calls
// served by cc; the connection closes with the test.
func shmConnPair(t *testing.T, cc grpc.ClientConnInterface) (*shm.ServerConn, *shm.Client) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ends [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "shm-pair")
		ends[i], err = net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	clients := make(chan *shm.Client, 1)
	go func() {
		cl, err := shm.NewClient(ends[0], shm.Options{})
		if err != nil {
			t.Error(err)
		}
		clients <- cl
	}()
	bind := func(context.Context) grpc.ClientConnInterface { return cc }
	sc, err := shm.Serve(ends[1], bind, 4<<20, nil, shm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl := <-clients
	if cl == nil {
		t.FailNow()
	}
	t.Cleanup(func() {
		sc.Abort()
		cl.Close()
		<-sc.Done()
	})
	return sc, cl
}

// stuckHandler is a server's channel whose unary handler ignores its
// context: it returns only once released.
type stuckHandler struct {
	grpc.ClientConnInterface
	started, release chan struct{}
}

func (h *stuckHandler) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	close(h.started)
	<-h.release
	return status.Error(codes.Aborted, "released")
}

// methodStream names the method of a call a forward handler carries.
type methodStream struct{ grpc.ServerTransportStream }

func (methodStream) Method() string { return "/test.Stuck/Call" }

// stuckCall has cl's connection carry a unary call to h, and waits until
// h runs it; the call's error comes on the channel.
func stuckCall(t *testing.T, cl *shm.Client, h *stuckHandler) <-chan error {
	t.Helper()
	ctx := grpc.NewContextWithServerTransportStream(context.Background(), methodStream{})
	dec := func(m any) error {
		m.(*inprocconn.Encoded).Data = mem.BufferSlice{mem.SliceBuffer("x")}
		return nil
	}
	errs := make(chan error, 1)
	go func() {
		_, err := cl.Unary(nil, ctx, dec, nil)
		errs <- err
	}()
	<-h.started
	return errs
}

// A connection accepted while the server drains, or on its Stop, races
// that stop: whichever takes shmConns' lock first, a Stop must close it.
func TestShmConnsStopReachesEveryConnection(t *testing.T) {
	ended := func(sc *shm.ServerConn) bool {
		select {
		case <-sc.Done():
			return true
		case <-time.After(5 * time.Second):
			return false
		}
	}
	t.Run("accepted-while-draining", func(t *testing.T) {
		h := &stuckHandler{started: make(chan struct{}), release: make(chan struct{})}
		defer close(h.release)
		sc, cl := shmConnPair(t, h)
		// Its call began before shmConns heard of it, as a call can
		// between the accept and add.
		call := stuckCall(t, cl, h)
		var c shmConns
		c.stop(true)
		if !c.add(sc) {
			t.Fatal("a draining server closed a new connection; it should drain it")
		}
		c.stop(false)
		select {
		case err := <-call:
			if status.Code(err) != codes.Unavailable {
				t.Errorf("the call ended with %v; want Unavailable, the connection's close", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Stop left a call running on a connection accepted while the server drained")
		}
	})
	t.Run("accepted-after-stop-cut-drain", func(t *testing.T) {
		var c shmConns
		sc, _ := shmConnPair(t, nil)
		c.stop(true)
		c.stop(false)
		if c.add(sc) {
			t.Error("a stopped server kept a new connection")
		}
		if !ended(sc) {
			t.Error("a connection accepted after Stop stayed open")
		}
	})
	t.Run("accepted-before-stop", func(t *testing.T) {
		var c shmConns
		sc, _ := shmConnPair(t, nil)
		if !c.add(sc) {
			t.Fatal("a serving server closed a new connection")
		}
		c.stop(false)
		if !ended(sc) {
			t.Error("Stop left a connection open")
		}
	})
}
