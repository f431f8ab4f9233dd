package localgrpc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestListenRejects checks that Listen returns an *AddressError naming
// the bad address and the problem, and leaves nothing listening: the good
// addresses given with the bad one are free afterwards.
func TestListenRejects(t *testing.T) {
	dir := t.TempDir()
	notSocket := dir + "/file"
	if err := os.WriteFile(notSocket, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	taken := uniqueName(t)
	serve(t, newEchoServer(), "inproc:"+taken)

	cases := []struct {
		name, addr, want string
	}{
		{"empty", "", "empty address"},
		{"unknown-scheme", "http://x", "unknown scheme"},
		{"not-a-socket", "unix:" + notSocket, "exists and is not a socket"},
		{"port-out-of-range", "127.0.0.1:65536", "out of range"},
		{"inproc-name-taken", "inproc:" + taken, "already served"},
		{"target", "dns:///example.com:443", "not an address to listen on"},
		{"path-too-long", "unix:/" + strings.Repeat("x", 200), "at most 107"},
		{"no-directory", "unix:" + dir + "/missing/s.sock", "no such file or directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			good := socketPath(t)
			goodName := uniqueName(t)
			srv := newEchoServer()
			err := srv.Listen("unix:"+good, "inproc:"+goodName, tc.addr)
			var ae *localgrpc.AddressError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Listen: %v, want an *AddressError saying %q", err, tc.want)
			}
			if got := srv.Addrs(); len(got) != 0 {
				t.Errorf("Addrs() = %q after a refused Listen, want none", got)
			}
			if _, err := os.Lstat(good); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the good socket %s was left behind: %v", good, err)
			}
			if claimed("inproc:" + goodName) {
				t.Error("the good in-process name was left claimed")
			}
			if fi, err := os.Stat(notSocket); err != nil || fi.Mode().IsRegular() != true {
				t.Errorf("the file that is not a socket was touched: %v", err)
			}
		})
	}
}

// TestLiveSocketIsKept checks that a second server on a path a live server
// serves fails with a clear error, leaves the file alone, and the first
// server keeps serving.
func TestLiveSocketIsKept(t *testing.T) {
	path := socketPath(t)
	serve(t, newEchoServer(), "unix:"+path)
	err := newEchoServer().Listen("unix:" + path)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Listen on a live socket: %v, want an error saying it is in use", err)
	}
	if _, err := dial(t, "unix:"+path).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "still"}); err != nil {
		t.Fatalf("the first server stopped answering: %v", err)
	}
	// The same for an abstract name.
	name := uniqueName(t)
	serve(t, newEchoServer(), "unix:@"+name)
	if err := newEchoServer().Listen("unix:@" + name); err == nil {
		t.Fatal("second Listen on a live abstract socket succeeded")
	}
}

// TestStaleSocketIsReplaced leaves a socket file with no process behind
// it, as a crashed server does, and serves on its path.
func TestStaleSocketIsReplaced(t *testing.T) {
	path := socketPath(t)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the stale socket is not there: %v", err)
	}
	serve(t, newEchoServer(), "unix:"+path)
	if _, err := dial(t, "unix:"+path).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
		t.Fatalf("call on the replaced socket: %v", err)
	}
}

// TestDialErrors checks the errors of NewClient.
func TestDialErrors(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"", "empty address"},
		{"bogus://x", "unknown scheme"},
	} {
		_, err := localgrpc.NewClient(tc.addr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewClient(%q): %v, want an error saying %q", tc.addr, err, tc.want)
		}
	}
}

// syncBuffer is a log destination the server may write from any goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPeerCredentials checks WithPeerCredentials on unix and abstract
// sockets: the server's own user is allowed by default and its handlers
// read the client's UID, GID and PID; an allow list without the current
// user denies every call with PermissionDenied and the denial is logged.
func TestPeerCredentials(t *testing.T) {
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	t.Run("allowed", func(t *testing.T) {
		seen := make(chan localgrpc.PeerCred, 2)
		srv := localgrpc.NewServer(localgrpc.WithPeerCredentials())
		echov1.RegisterEchoServer(srv, credEcho{seen: seen})
		serve(t, srv, "unix:"+socketPath(t), "unix:@"+uniqueName(t))
		for _, addr := range srv.Addrs() {
			if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			c := <-seen
			if c.UID != uid || c.GID != gid || c.PID != int32(os.Getpid()) {
				t.Errorf("%s: handler saw %+v, want uid %d gid %d pid %d", addr, c, uid, gid, os.Getpid())
			}
		}
	})
	t.Run("allowed-by-gid", func(t *testing.T) {
		srv := newEchoServer(localgrpc.WithPeerCredentials(localgrpc.AllowUIDs(uid+1), localgrpc.AllowGIDs(gid)))
		serve(t, srv, "unix:"+socketPath(t))
		if _, err := dial(t, srv.Addrs()[0]).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("denied", func(t *testing.T) {
		var logs syncBuffer
		srv := newEchoServer(
			localgrpc.WithPeerCredentials(localgrpc.AllowUIDs(uid+1)),
			localgrpc.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		)
		serve(t, srv, "unix:"+socketPath(t), "unix:@"+uniqueName(t))
		for _, addr := range srv.Addrs() {
			c := dial(t, addr)
			for _, call := range echoCalls {
				_, err := call.Call(timeoutCtx(t), c)
				if status.Code(err) != codes.PermissionDenied {
					t.Errorf("%s %s: %v, want PermissionDenied", addr, call.Name, err)
				}
			}
		}
		if !strings.Contains(logs.String(), "denied") {
			t.Errorf("the denial was not logged; log: %q", logs.String())
		}
	})
}

type credEcho struct {
	echov1.UnimplementedEchoServer
	seen chan<- localgrpc.PeerCred
}

func (e credEcho) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	c, ok := localgrpc.PeerCredFromContext(ctx)
	if !ok {
		return nil, status.Error(codes.Internal, "no peer credentials")
	}
	e.seen <- c
	return &echov1.EchoResponse{}, nil
}

// TestClosedInprocConn checks that calls on a closed in-process connection
// fail with Canceled, as on a closed grpc.ClientConn, and that closing it
// does not stop the server.
func TestClosedInprocConn(t *testing.T) {
	name := "inproc:" + uniqueName(t)
	serve(t, newEchoServer(), name)
	cc, err := localgrpc.NewClient(name)
	if err != nil {
		t.Fatal(err)
	}
	cc.Close()
	c := echov1.NewEchoClient(cc)
	if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}); status.Code(err) != codes.Canceled {
		t.Errorf("Get on a closed connection: %v, want Canceled", err)
	}
	if _, err := c.Update(timeoutCtx(t)); status.Code(err) != codes.Canceled {
		t.Errorf("Update on a closed connection: %v, want Canceled", err)
	}
	if _, err := dial(t, name).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
		t.Errorf("a new connection after Close: %v", err)
	}
}
