package localgrpc_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
)

// localDialChildEnv marks the test binary run by
// TestLocalAddressesAreDialedLocally in namespaces of its own.
const localDialChildEnv = "LOCALGRPC_LOCAL_DIAL_CHILD"

// TestLocalAddressesAreDialedLocally: an address NewClient sends plaintext
// to, because it says this machine, is dialed on this machine, whatever
// DNS and the proxy settings say. The test runs in a mount and a network
// namespace of its own, where the hosts file has no localhost, the
// resolver's search domain turns "localhost" into another name, a DNS
// server of the test's own on loopback answers every name with
// 127.0.0.9, where a second server listens, and HTTPS_PROXY names a
// proxy of the test's own. Every call must reach the server on 127.0.0.1
// (or ::1), never the one DNS names, and never the proxy.
func TestLocalAddressesAreDialedLocally(t *testing.T) {
	if os.Getenv(localDialChildEnv) == "" {
		runInOwnNamespaces(t, "TestLocalAddressesAreDialedLocally")
		return
	}
	setUpLocalDialNamespace(t)
	dns := serveDNS(t, net.IPv4(127, 0, 0, 9))
	proxy := serveProxy(t)
	t.Setenv("HTTPS_PROXY", "http://"+proxy.addr)
	t.Setenv("NO_PROXY", "")

	// The setting sends localhost where DNS says: without the fix, so
	// would NewClient's dial.
	if addrs, err := net.LookupHost("localhost"); err != nil || len(addrs) != 1 || addrs[0] != "127.0.0.9" {
		t.Fatalf("in the test's namespace, localhost resolves to %q, %v: want DNS's answer, 127.0.0.9", addrs, err)
	}

	var right, wrong atomic.Int64
	l := listenTCP(t, "127.0.0.1:0")
	p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	serveListeners(t, &right, l)
	serveListeners(t, &wrong, listenTCP(t, net.JoinHostPort("127.0.0.9", p)))
	addrs := []string{
		"localhost:" + p,
		"LOCALHOST:" + p,
		"LocalHost:" + p,
		":" + p,
		"dns:///localhost:" + p,
		"dns://127.0.0.1:53/localhost:" + p,
		"dns:///LOCALHOST:" + p,
		"dns:///:" + p,
		"passthrough:///localhost:" + p,
		"passthrough:///:" + p,
		"127.0.0.1:" + p,
		"0.0.0.0:" + p,
		"[::ffff:0.0.0.0]:" + p,
		"[::ffff:127.0.0.1]:" + p,
	}
	if l6, err := net.Listen("tcp6", net.JoinHostPort("::1", p)); err == nil {
		serveListeners(t, &right, l6)
		addrs = append(addrs, "[::]:"+p, "[::1]:"+p)
	}
	for _, addr := range addrs {
		before := right.Load()
		c := dial(t, addr)
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "secret"}); err != nil {
			t.Errorf("%s: %v", addr, err)
			continue
		}
		if right.Load() != before+1 {
			t.Errorf("%s: the call did not reach the server on loopback", addr)
		}
	}
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d calls reached the server DNS named", n)
	}
	// A server that listens on localhost listens on loopback too.
	srv := newEchoServer()
	serve(t, srv, "localhost:0", "LOCALHOST:0")
	if len(srv.Addrs()) != 2 {
		t.Errorf("Listen(localhost:0, LOCALHOST:0) listens on %q", srv.Addrs())
	}
	for _, a := range srv.Addrs() {
		if host, _, _ := net.SplitHostPort(strings.TrimPrefix(a, "tcp:")); host != "127.0.0.1" && host != "::1" {
			t.Errorf("Listen(localhost:0) listens on %s, where DNS says, want 127.0.0.1 or ::1", a)
		}
	}
	if seen := proxy.seen(); len(seen) > 0 {
		t.Errorf("the proxy was asked for %q", seen)
	}
	t.Logf("DNS was asked %q", dns.seen())
}

// TestLocalAddressesIgnoreResolvers: an address NewClient sends plaintext
// to, because it says this machine, is dialed where it says whatever
// resolver is in play. The last resolver.Register of a scheme wins, for
// the whole program, so any package a program imports may replace
// grpc-go's passthrough and dns resolvers; grpc.WithResolvers, given
// through WithGRPCDialOptions, replaces them for one connection. Here
// both answer every target with a server on an address that is not
// loopback, standing in for another machine: 192.0.2.2 on loopback in a
// network namespace of the test's own or, without root, an address of
// this machine's own. No connection may reach it, and a dialer of the
// user's own that dials it sends it no plaintext. The test runs in a
// child process, whose resolvers it may replace for good.
func TestLocalAddressesIgnoreResolvers(t *testing.T) {
	if os.Getenv(localDialChildEnv) == "" {
		const test = "TestLocalAddressesIgnoreResolvers"
		if os.Geteuid() != 0 || !runChild(t, test, true) {
			runChild(t, test, false)
		}
		return
	}
	far := serveFar(t, otherMachine(t))
	var right atomic.Int64
	l := listenTCP(t, "127.0.0.1:0")
	p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	serveListeners(t, &right, l)
	path, name := socketPath(t), uniqueName(t)
	serve(t, newEchoServer(countingInterceptor(&right)), "unix:"+path, "unix:@"+name)
	tcp := []string{
		"127.0.0.1:" + p,
		"0.0.0.0:" + p,
		"localhost:" + p,
		":" + p,
		"passthrough:///127.0.0.1:" + p,
		"passthrough:///localhost:" + p,
		"passthrough:///:" + p,
		"dns:///127.0.0.1:" + p,
		"dns:///localhost:" + p,
		"dns:///:" + p,
	}
	if l6, err := net.Listen("tcp6", net.JoinHostPort("::1", p)); err == nil {
		serveListeners(t, &right, l6)
		tcp = append(tcp, "[::1]:"+p, "[::]:"+p, "passthrough:///[::1]:"+p, "dns:///[::1]:"+p)
	}
	all := append([]string{"unix:" + path, "unix:@" + name}, tcp...)
	// localgrpc-local is the scheme of NewClient's own resolver for
	// addresses on this machine: not even one of its scheme is asked.
	var resolvers []resolver.Builder
	for _, s := range []string{"passthrough", "dns", "localgrpc-local"} {
		resolvers = append(resolvers, farResolver{s, far.addr})
	}
	replaced := localgrpc.WithGRPCDialOptions(grpc.WithResolvers(resolvers...))

	t.Run("WithResolvers", func(t *testing.T) {
		for _, addr := range all {
			callHere(t, &right, addr, replaced)
		}
		if n, _ := far.settle(t); n > 0 {
			t.Errorf("%d connections reached %s, where the resolvers of grpc.WithResolvers sent them", n, far.addr)
		}
	})
	t.Run("WithResolvers and a user dialer", func(t *testing.T) {
		// A dialer of the user's is given the address as written.
		dialer := localgrpc.WithGRPCDialOptions(grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", a)
		}))
		for _, addr := range tcp {
			cc, err := localgrpc.NewClient(addr, replaced, dialer)
			if err != nil {
				t.Errorf("NewClient(%q): %v", addr, err)
				continue
			}
			_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "secret"})
			cc.Close()
			if err != nil {
				// The dialer asks the machine's resolver for localhost.
				t.Logf("%s, through a dialer of the user's: %v", addr, err)
			}
		}
		if n, _ := far.settle(t); n > 0 {
			t.Errorf("%d connections reached %s, where the resolvers of grpc.WithResolvers sent a dialer of the user's", n, far.addr)
		}
	})
	t.Run("user dialer elsewhere", func(t *testing.T) {
		// A dialer of the user's that dials another machine gets no
		// plaintext through without transport credentials.
		dialer := localgrpc.WithGRPCDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", far.addr)
		}))
		for _, addr := range all {
			cc, err := localgrpc.NewClient(addr, dialer)
			if err != nil {
				t.Errorf("NewClient(%q): %v", addr, err)
				continue
			}
			_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "secret"})
			if err == nil {
				t.Errorf("%s, through a dialer of the user's to %s: the call succeeded", addr, far.addr)
			} else if addr == all[0] {
				t.Logf("%s, through a dialer of the user's to %s: %v", addr, far.addr, err)
			}
			cc.Close()
		}
		n, bytes := far.settle(t)
		if bytes > 0 {
			t.Errorf("%d bytes reached %s through a dialer of the user's, with no transport credentials", bytes, far.addr)
		}
		if n == 0 {
			t.Errorf("the user's dialer never reached %s: the test shows nothing", far.addr)
		}
	})
	t.Run("registered", func(t *testing.T) {
		for _, r := range resolvers {
			resolver.Register(r)
		}
		// grpc-go itself now goes where the replacement says.
		cc, err := grpc.NewClient("passthrough:///127.0.0.1:"+p, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
		cc.Close()
		if n, _ := far.settle(t); n == 0 {
			t.Fatalf("a grpc-go client of passthrough:///127.0.0.1:%s never reached %s: the replaced resolver is not in play", p, far.addr)
		}
		for _, addr := range all {
			callHere(t, &right, addr)
		}
		if n, _ := far.settle(t); n > 0 {
			t.Errorf("%d connections reached %s, where the registered resolvers sent them", n, far.addr)
		}
	})
}

// callHere makes a call to addr with opts, which must reach a server that
// counts its calls in right.
func callHere(t *testing.T, right *atomic.Int64, addr string, opts ...localgrpc.ClientOption) {
	t.Helper()
	cc, err := localgrpc.NewClient(addr, opts...)
	if err != nil {
		t.Errorf("NewClient(%q): %v", addr, err)
		return
	}
	defer cc.Close()
	before := right.Load()
	if _, err := echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "secret"}); err != nil {
		t.Errorf("%s: %v", addr, err)
	} else if right.Load() != before+1 {
		t.Errorf("%s: the call did not reach the server on this machine", addr)
	}
}

// farResolver is a resolver of scheme that answers every target with
// addr, as one a program's imports register may.
type farResolver struct{ scheme, addr string }

func (r farResolver) Scheme() string { return r.scheme }

func (r farResolver) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	return r, cc.UpdateState(resolver.State{Addresses: []resolver.Address{{Addr: r.addr}}})
}

func (farResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (farResolver) Close()                                {}

// otherMachine is an IP address that is not loopback where the test may
// listen: 192.0.2.2 (TEST-NET-1) added to loopback in the child's network
// namespace, or out of one an address of this machine's own. It skips
// the test where there is none.
func otherMachine(t *testing.T) net.IP {
	if os.Getenv(localDialChildEnv) == childInNamespaces {
		upLoopback(t)
		ip := net.IPv4(192, 0, 2, 2)
		fd, ifr := ifreq(t, "lo:1")
		defer unix.Close(fd)
		if err := ifr.SetInet4Addr(ip.To4()); err != nil {
			t.Fatal(err)
		}
		if err := unix.IoctlIfreq(fd, unix.SIOCSIFADDR, ifr); err != nil {
			t.Skipf("skipped: cannot add %s to loopback in the test's network namespace: %v", ip, err)
		}
		return ip
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("skipped: no address of this machine's to stand in for another machine: %v", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
			return n.IP
		}
	}
	t.Skip("skipped: this machine has no address but loopback and link-local ones to stand in for another machine, and the test cannot make a network namespace with one (that needs root)")
	return nil
}

// A farServer stands in for another machine: it counts the connections
// that reach it and the bytes that each brings in its first read, and
// answers none.
type farServer struct {
	addr    string
	changed chan struct{} // a connection ended
	mu      sync.Mutex
	// accepted and ended count connections, probes included; conns and
	// bytes count the others since the last settle.
	accepted, ended int
	conns, bytes    int
	probes          map[string]bool // settle's, by their local address
	probed          int             // probes that ended
}

func serveFar(t *testing.T, ip net.IP) *farServer {
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Skipf("skipped: cannot listen on %s to stand in for another machine: %v", ip, err)
	}
	f := &farServer{addr: l.Addr().String(), changed: make(chan struct{}, 1), probes: map[string]bool{}}
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	conns.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.accepted++
			f.mu.Unlock()
			conns.Go(func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(waitLimit))
				n, _ := c.Read(make([]byte, 1024))
				f.mu.Lock()
				f.ended++
				if f.probes[c.RemoteAddr().String()] {
					f.probed++
				} else {
					f.conns++
					f.bytes += n
				}
				f.mu.Unlock()
				select {
				case f.changed <- struct{}{}:
				default:
				}
			})
		}
	})
	return f
}

// settle returns the connections that reached f since the last settle
// and the bytes they brought, once f has accepted every connection made
// before it and read what they brought: the clients must be closed.
// Connections are accepted in the order they were made, so settle makes
// one of its own, a probe, and waits for it.
func (f *farServer) settle(t *testing.T) (conns, bytes int) {
	t.Helper()
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.probes[c.LocalAddr().String()] = true
	want := len(f.probes)
	f.mu.Unlock()
	c.Close()
	deadline := time.After(waitLimit)
	for {
		f.mu.Lock()
		if f.probed == want && f.ended == f.accepted {
			conns, bytes = f.conns, f.bytes
			f.conns, f.bytes = 0, 0
			f.mu.Unlock()
			return conns, bytes
		}
		f.mu.Unlock()
		select {
		case <-f.changed:
		case <-deadline:
			t.Fatalf("the connections to %s did not end within %v", f.addr, waitLimit)
		}
	}
}

// runInOwnNamespaces runs test in a child of this test binary in a new
// mount and network namespace, and reports its result as the test's; it
// skips the test where namespaces cannot be made.
func runInOwnNamespaces(t *testing.T, test string) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: making mount and network namespaces needs root")
	}
	if !runChild(t, test, true) {
		t.Skip("skipped: cannot start the test in namespaces of its own")
	}
}

// Values of localDialChildEnv: the child runs in namespaces of its own,
// or in this process's.
const (
	childInNamespaces = "namespaces"
	childPlain        = "plain"
)

// runChild runs test in a child of this test binary, in a new mount and
// network namespace if namespaces is set, and reports its result as the
// test's. It returns false, having done nothing, if the child could not
// start in namespaces of its own; it skips the test if a child could not
// start at all.
func runChild(t *testing.T, test string, namespaces bool) bool {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	mode, where := childPlain, "a child process"
	if namespaces {
		mode, where = childInNamespaces, "its namespaces"
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS | unix.CLONE_NEWNET}
	}
	// GODEBUG=netdns=go: Go's own resolver, which reads the files the
	// child mounts; glibc's would read them too, but through whatever
	// modules nsswitch.conf names.
	cmd.Env = append(os.Environ(), localDialChildEnv+"="+mode, "GODEBUG=netdns=go")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit) && namespaces:
		t.Logf("cannot start the test in %s: %v", where, err)
		return false
	case err != nil && !errors.As(err, &exit):
		t.Skipf("skipped: cannot start the test in %s: %v", where, err)
	case strings.Contains(string(out), "--- SKIP: "+test):
		t.Skipf("skipped in %s:\n%s", where, out)
	case err != nil:
		t.Fatalf("in %s: %v\n%s", where, err, out)
	}
	t.Logf("in %s:\n%s", where, out)
	return true
}

// ifreq is a socket to configure interfaces with, which the caller
// closes, and a request for the interface name.
func ifreq(t *testing.T, name string) (int, *unix.Ifreq) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	return fd, ifr
}

// upLoopback, in the child's network namespace, brings loopback up.
func upLoopback(t *testing.T) {
	fd, ifr := ifreq(t, "lo")
	defer unix.Close(fd)
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatalf("bringing loopback up: %v", err)
	}
}

// setUpLocalDialNamespace, in the child's namespaces, brings loopback up
// and mounts a hosts file with no localhost, a resolv.conf whose name
// server is on loopback with a search domain, and an nsswitch.conf that
// asks the files and then DNS.
func setUpLocalDialNamespace(t *testing.T) {
	upLoopback(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"hosts":         "127.0.0.9 unrelated.example\n",
		"resolv.conf":   "nameserver 127.0.0.1\nsearch corp.example\noptions attempts:1 timeout:2\n",
		"nsswitch.conf": "hosts: files dns\n",
	} {
		target := filepath.Join("/etc", name)
		if _, err := os.Stat(target); err != nil {
			if name == "nsswitch.conf" {
				continue // Go's resolver then asks the files and DNS
			}
			t.Skipf("skipped: no %s to mount over: %v", target, err)
		}
		src := filepath.Join(dir, name)
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("skipped: cannot mount over %s in the test's mount namespace: %v", target, err)
		}
	}
}

// A recorder keeps what a test's server was asked.
type recorder struct {
	mu    sync.Mutex
	asked []string
	addr  string
}

func (r *recorder) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, s)
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// serveDNS answers every A question on 127.0.0.1:53 (UDP) with ip, and
// every other with no answer, until the test ends.
func serveDNS(t *testing.T, ip net.IP) *recorder {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:53")
	if err != nil {
		t.Fatalf("the test's DNS server: %v", err)
	}
	r := &recorder{addr: pc.LocalAddr().String()}
	done := make(chan struct{})
	t.Cleanup(func() { pc.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			r.record(q.Type.String() + " " + q.Name.String())
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RecursionAvailable: true})
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if q.Type == dnsmessage.TypeA {
				var a [4]byte
				copy(a[:], ip.To4())
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: a})
			}
			if msg, err := b.Finish(); err == nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	return r
}

// serveProxy records the first line of every request an HTTP proxy on
// loopback gets, and answers none, until the test ends.
func serveProxy(t *testing.T) *recorder {
	l := listenTCP(t, "127.0.0.1:0")
	r := &recorder{addr: l.Addr().String()}
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	conns.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				if line, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					r.record(strings.TrimSpace(line))
				}
			})
		}
	})
	return r
}

// listenTCP listens on addr until the test ends.
func listenTCP(t *testing.T, addr string) net.Listener {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serveListeners serves an Echo server on l that counts its calls in n.
func serveListeners(t *testing.T, n *atomic.Int64, l net.Listener) {
	srv := newEchoServer(countingInterceptor(n))
	if err := srv.AddListener(l); err != nil {
		l.Close()
		t.Fatal(err)
	}
	serve(t, srv)
}

// attack5: addresses that NewClient accepts without credentials must be
// dialed on this machine whatever DNS says, as the doc promises for
// localhost ("never resolved") and for IP literals. These spellings are
// accepted without credentials; in a namespace where DNS answers every
// name with 127.0.0.9 (a second server) and the hosts file has no
// localhost, every call must reach the server on 127.0.0.1 / ::1.

func TestAttack5AcceptedSpellingsDialLocally(t *testing.T) {
	if os.Getenv(localDialChildEnv) == "" {
		runInOwnNamespaces(t, "TestAttack5AcceptedSpellingsDialLocally")
		return
	}
	setUpLocalDialNamespace(t)
	dns := serveDNS(t, net.IPv4(127, 0, 0, 9))

	var right, wrong atomic.Int64
	l := listenTCP(t, "127.0.0.1:0")
	p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	serveListeners(t, &right, l)
	serveListeners(t, &wrong, listenTCP(t, net.JoinHostPort("127.0.0.9", p)))
	addrs := []string{
		"[localhost]:" + p,
		"[LOCALHOST]:" + p,
		"passthrough:///[localhost]:" + p,
		"passthrough://evil.example/localhost:" + p,
		"dns:///%6cocalhost:" + p,
		"dns:///%4cOCALHOST:" + p,
		"dns://evil.example/localhost:" + p,
		"dns:///localhost:" + p + "?x=1",
		"dns:///localhost:" + p + "#f",
		"[127.0.0.1]:" + p,
		"[::ffff:7f00:1]:" + p,
		"[::ffff:0:0]:" + p,
		"passthrough:///0.0.0.0:" + p,
		"localhost:0" + p,
	}
	if l6, err := net.Listen("tcp6", net.JoinHostPort("::1", p)); err == nil {
		serveListeners(t, &right, l6)
		addrs = append(addrs, "[::1%lo]:"+p, "[::1%25lo]:"+p, "[0:0:0:0:0:0:0:1]:"+p, "dns:///[::1%25lo]:"+p, "passthrough:///[::]:"+p)
	}
	for _, addr := range addrs {
		t.Run(addr, func(t *testing.T) {
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Skipf("refused without credentials: %v", err)
			}
			defer cc.Close()
			beforeR, beforeW := right.Load(), wrong.Load()
			_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "secret"})
			switch {
			case wrong.Load() != beforeW:
				t.Errorf("accepted without credentials (this machine), but the call reached the server DNS named (127.0.0.9): sent plaintext where DNS decides")
			case err != nil:
				t.Logf("call failed: %v (reached neither server)", err)
			case right.Load() != beforeR+1:
				t.Errorf("the call did not reach the server on loopback")
			}
		})
	}
	t.Logf("DNS was asked %q", dns.seen())
}
