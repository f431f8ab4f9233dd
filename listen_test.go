package localgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// transports are the kinds of address a Server listens on, each making a
// fresh address.
var transports = []struct {
	name string
	addr func(t *testing.T) string
}{
	{"inproc", func(t *testing.T) string { return "inproc:" + uniqueName(t) }},
	{"unix", func(t *testing.T) string { return "unix:" + socketPath(t) }},
	{"abstract", func(t *testing.T) string { return "unix:@" + uniqueName(t) }},
	{"tcp", func(t *testing.T) string { return "127.0.0.1:0" }},
}

// startServe serves srv, which listens, until the test ends.
func startServe(t *testing.T, srv *localgrpc.Server) {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("Serve: %v", err)
		}
	})
}

// TestDialAfterListen runs the README's snippet many times on every
// transport: once Listen has returned, NewClient and a call work, with Serve
// started on another goroutine just before.
func TestDialAfterListen(t *testing.T) {
	for _, tr := range transports {
		t.Run("transport="+tr.name, func(t *testing.T) {
			for range 20 {
				srv := newEchoServer()
				if err := srv.Listen(tr.addr(t)); err != nil {
					t.Fatal(err)
				}
				startServe(t, srv)
				if _, err := dial(t, srv.Addrs()[0]).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
					t.Fatalf("a call right after Listen: %v", err)
				}
			}
		})
	}
}

// TestCallsWaitForServe checks that, as over a socket a grpc-go client
// waits to be accepted, a call made between Listen and Serve waits: it
// ends with its deadline, or succeeds once Serve starts; and Stop ends
// the wait with Unavailable.
func TestCallsWaitForServe(t *testing.T) {
	for _, tr := range transports {
		t.Run("transport="+tr.name, func(t *testing.T) {
			srv := newEchoServer()
			if err := srv.Listen(tr.addr(t)); err != nil {
				t.Fatal(err)
			}
			c := dial(t, srv.Addrs()[0])
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if _, err := c.Get(ctx, &echov1.EchoRequest{}); status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("a call before Serve: %v, want DeadlineExceeded", err)
			}
			call := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{})
				call <- err
			}()
			startServe(t, srv)
			if err := <-call; err != nil {
				t.Errorf("a call made before Serve, after Serve started: %v", err)
			}
		})
		t.Run("transport="+tr.name+"/stop-before-serve", func(t *testing.T) {
			srv := newEchoServer()
			if err := srv.Listen(tr.addr(t)); err != nil {
				t.Fatal(err)
			}
			c := dial(t, srv.Addrs()[0])
			call := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{})
				call <- err
			}()
			srv.Stop()
			if err := <-call; status.Code(err) != codes.Unavailable {
				t.Errorf("a call waiting for Serve when Stop came: %v, want Unavailable", err)
			}
		})
	}
}

// TestListenWhileServing checks that what Listen binds while Serve
// serves is served at once.
func TestListenWhileServing(t *testing.T) {
	srv := newEchoServer()
	serve(t, srv, "inproc:"+uniqueName(t))
	for _, tr := range transports {
		if err := srv.Listen(tr.addr(t)); err != nil {
			t.Fatal(err)
		}
	}
	for _, addr := range srv.Addrs() {
		if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// TestListenAndServe checks the one-call form: it serves until its
// context ends, and a bad address is an error at once.
func TestListenAndServe(t *testing.T) {
	srv := newEchoServer()
	name := "inproc:" + uniqueName(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe(ctx, name) }()
	// A call that waits for ready waits for the name to be bound and
	// served: no sleep.
	cc, err := localgrpc.NewClient(name)
	if err != nil {
		t.Fatalf("NewClient(%q) before the server listens: %v", name, err)
	}
	_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.WaitForReady(true))
	cc.Close()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ListenAndServe after its context ended: %v", err)
	}
	if err := newEchoServer().ListenAndServe(context.Background(), "nosuch://x"); err == nil || !strings.Contains(err.Error(), "unknown scheme") {
		t.Errorf("ListenAndServe on a bad address: %v", err)
	}
}

// TestListenServeMisuse checks the errors of Listen, AddListener and
// Serve called wrongly. Serve after Stop fails as grpc.Server's does, with
// grpc.ErrServerStopped.
func TestListenServeMisuse(t *testing.T) {
	path := socketPath(t)
	stopped := func() *localgrpc.Server {
		s := newEchoServer()
		s.Stop()
		return s
	}
	cases := []struct {
		name string
		do   func(t *testing.T) error
		want string // in the error
		is   error  // or the error it wraps
	}{
		{"listen-nothing", func(*testing.T) error { return newEchoServer().Listen() }, "at least one address", nil},
		{"listen-twice-at-once", func(*testing.T) error { return newEchoServer().Listen("unix:"+path, "unix:"+path) }, "given twice", nil},
		{"listen-inproc-taken", func(t *testing.T) error {
			name := "inproc:" + uniqueName(t)
			serve(t, newEchoServer(), name)
			return newEchoServer().Listen(name)
		}, "already served", nil},
		{"listen-after-stop", func(*testing.T) error { return stopped().Listen("unix:" + path) }, "", grpc.ErrServerStopped},
		{"serve-nothing", func(*testing.T) error { return newEchoServer().Serve(context.Background()) }, "nothing to serve", nil},
		{"serve-twice", func(t *testing.T) error {
			srv := newEchoServer()
			name := "inproc:" + uniqueName(t)
			serve(t, srv, name)
			// A call is answered once the first Serve serves.
			if _, err := dial(t, name).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
				t.Fatal(err)
			}
			return srv.Serve(context.Background())
		}, "already called", nil},
		{"serve-after-stop", func(*testing.T) error { return stopped().Serve(context.Background()) }, "", grpc.ErrServerStopped},
		{"add-nil", func(*testing.T) error { return newEchoServer().AddListener(nil) }, "nil", nil},
		{"add-twice", func(t *testing.T) error {
			l := netListen(t, "unix", "@"+uniqueName(t))
			srv := newEchoServer()
			if err := srv.AddListener(l); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Stop)
			return srv.AddListener(l)
		}, "already added", nil},
		{"add-unnamed-unix", func(t *testing.T) error {
			return newEchoServer().AddListener(fakeListener{addr: &net.UnixAddr{Net: "unix"}})
		}, "no name", nil},
		{"add-datagram", func(t *testing.T) error {
			return newEchoServer().AddListener(fakeListener{addr: &net.UnixAddr{Name: "/x", Net: "unixpacket"}})
		}, "stream socket", nil},
		{"add-after-stop", func(t *testing.T) error {
			l := netListen(t, "unix", "@"+uniqueName(t))
			err := stopped().AddListener(l)
			// The listener is still the caller's: open.
			if _, derr := net.Dial("unix", l.Addr().String()); derr != nil {
				t.Errorf("AddListener after Stop closed the caller's listener: %v", derr)
			}
			return err
		}, "", grpc.ErrServerStopped},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(t)
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("%v, want an error wrapping %v", err, tc.is)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
			if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused call left the socket file %s: %v", path, err)
			}
		})
	}

	// The oracle: grpc-go's own Server, served after Stop.
	g := grpc.NewServer()
	g.Stop()
	if err := g.Serve(netListen(t, "unix", "@"+uniqueName(t))); !errors.Is(err, grpc.ErrServerStopped) {
		t.Errorf("grpc.Server.Serve after Stop: %v; the test expects grpc.ErrServerStopped", err)
	}
}

func netListen(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// fakeListener is a listener with any address, whose Accept fails with
// err, or at once with net.ErrClosed once closed.
type fakeListener struct {
	addr   net.Addr
	err    error
	closed chan struct{}
}

func (f fakeListener) Accept() (net.Conn, error) {
	if f.err != nil {
		return nil, f.err
	}
	<-f.closed
	return nil, net.ErrClosed
}

func (f fakeListener) Close() error   { return nil }
func (f fakeListener) Addr() net.Addr { return f.addr }

// TestAddListener serves listeners the caller made, of every kind of
// socket, beside an address of Listen: each is in Addrs, in the grammar,
// and answers; Stop closes them.
func TestAddListener(t *testing.T) {
	dir := t.TempDir()
	ls := []net.Listener{
		netListen(t, "unix", dir+"/activated.sock"),
		netListen(t, "unix", "@"+uniqueName(t)),
		netListen(t, "tcp", "127.0.0.1:0"),
	}
	srv := newEchoServer()
	name := "inproc:" + uniqueName(t)
	if err := srv.Listen(name); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if err := srv.AddListener(l); err != nil {
			t.Fatal(err)
		}
	}
	startServe(t, srv)
	want := []string{name, "unix:" + dir + "/activated.sock", "unix:@" + ls[1].Addr().String()[1:], ls[2].Addr().String()}
	got := srv.Addrs()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Addrs() = %q, want %q", got, want)
	}
	for _, addr := range got {
		if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	srv.Stop()
	for _, l := range ls {
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s after Stop: Accept gives %v, want net.ErrClosed", l.Addr(), err)
		}
	}
}

// TestAddListenerSocketFile: the server closes a unix listener it was
// given when it stops, and the listener's Close says what becomes of its
// socket file. net.Listen's removes the file it made, unless its maker
// called SetUnlinkOnClose(false); one made from an inherited file (as
// systemd's socket activation passes on) leaves it.
func TestAddListenerSocketFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string) net.Listener
		kept bool
	}{
		{"net.Listen", func(t *testing.T, path string) net.Listener {
			return netListen(t, "unix", path)
		}, false},
		{"SetUnlinkOnClose(false)", func(t *testing.T, path string) net.Listener {
			l := netListen(t, "unix", path)
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			return l
		}, true},
		{"net.FileListener", func(t *testing.T, path string) net.Listener {
			made := netListen(t, "unix", path)
			made.(*net.UnixListener).SetUnlinkOnClose(false)
			f, err := made.(*net.UnixListener).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			made.Close()
			l, err := net.FileListener(f)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return l
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := socketPath(t)
			l := tc.make(t, path)
			srv := newEchoServer()
			if err := srv.AddListener(l); err != nil {
				t.Fatal(err)
			}
			startServe(t, srv)
			if _, err := dial(t, "unix:"+path).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
				t.Fatal(err)
			}
			srv.Stop()
			_, err := os.Lstat(path)
			switch {
			case tc.kept && err != nil:
				t.Errorf("after Stop, the socket file: %v; want it kept", err)
			case !tc.kept && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("after Stop, the socket file: %v; want it removed by the listener's Close", err)
			}
		})
	}
}

// TestServeFailsWithItsListener gives the server a listener whose Accept
// fails for good: Serve returns that error, having stopped the server,
// rather than hang; grpc-go's Serve returns it too.
func TestServeFailsWithItsListener(t *testing.T) {
	broken := errors.New("the listener broke")
	l := fakeListener{addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, err: broken}
	srv := newEchoServer()
	name := "inproc:" + uniqueName(t)
	if err := srv.Listen(name); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddListener(l); err != nil {
		t.Fatal(err)
	}
	within(t, "Serve with a broken listener", func() {
		if err := srv.Serve(context.Background()); !errors.Is(err, broken) {
			t.Errorf("Serve: %v, want the listener's error", err)
		}
	})
	if claimed(name) {
		t.Error("the server still listens after Serve failed")
	}
	if err := grpc.NewServer().Serve(l); !errors.Is(err, broken) {
		t.Errorf("grpc.Server.Serve: %v; the test expects the listener's error", err)
	}
}

// TestRegisterServiceMisuse checks that registering a service after Serve
// or Stop began, or twice, panics saying so whatever the transports:
// grpc.Server ends the process for a duplicate or one after its Serve.
func TestRegisterServiceMisuse(t *testing.T) {
	panics := func(f func()) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		f()
		return ""
	}
	srv := newEchoServer()
	if got := panics(func() { echov1.RegisterEchoServer(srv, echo.Server{}) }); !strings.Contains(got, "duplicate") {
		t.Errorf("registering Echo twice: panic %q, want one saying duplicate", got)
	}
	stopped := newEchoServer()
	stopped.Stop()
	for _, srv := range []*localgrpc.Server{servingInproc(t), stopped} {
		if got := panics(func() { healthgrpc.RegisterHealthServer(srv, health.NewServer()) }); !strings.Contains(got, "began to serve or stop") {
			t.Errorf("registering after Serve or Stop: panic %q, want one saying so", got)
		}
	}
}

// servingInproc returns a Server that serves one in-process address.
func servingInproc(t *testing.T) *localgrpc.Server {
	srv := newEchoServer()
	name := "inproc:" + uniqueName(t)
	serve(t, srv, name)
	if _, err := dial(t, name).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestParseListenAddresses checks that every bad address of a listen is
// named at once, in an *AddressError of its own, and that good ones parse
// in order.
func TestParseListenAddresses(t *testing.T) {
	good := []string{"unix:/run/a.sock", "127.0.0.1:0", "127.0.0.1:0", "inproc:a"}
	parsed, err := localgrpc.ParseListenAddresses(good...)
	if err != nil || len(parsed) != len(good) {
		t.Fatalf("ParseListenAddresses(%q) = %v, %v; want %d addresses", good, parsed, err, len(good))
	}
	for i, p := range parsed {
		if p.String() != good[i] {
			t.Errorf("address %d is %s, want %s", i, p, good[i])
		}
	}
	bad := map[string]string{ // each bad address, and what its error says
		"dns:///localhost:443": "names servers to dial",
		"unix:///run/a.sock":   `the same address as "unix:/run/a.sock"`,
		"h:99999":              "out of range",
	}
	addrs := []string{"unix:/run/a.sock", "dns:///localhost:443", "unix:///run/a.sock", "h:99999", "unix:/run/a.sock"}
	parsed, err = localgrpc.ParseListenAddresses(addrs...)
	if parsed != nil {
		t.Errorf("ParseListenAddresses(%q) returned addresses %v beside its error", addrs, parsed)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != len(bad)+1 {
		t.Fatalf("ParseListenAddresses(%q): %v; want %d errors", addrs, err, len(bad)+1)
	}
	for i, e := range joined.Unwrap() {
		var ae *localgrpc.AddressError
		if !errors.As(e, &ae) {
			t.Errorf("error %d, %v, is no *AddressError", i, e)
			continue
		}
		want, ok := bad[ae.Address]
		if !ok {
			want = "given twice" // the last unix:/run/a.sock
		}
		if !strings.Contains(e.Error(), want) {
			t.Errorf("error for %q: %v; want it to say %q", ae.Address, e, want)
		}
	}
}
