package localgrpc_test

import (
	"bufio"
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

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
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
		"passthrough:///localhost:" + p,
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

// runInOwnNamespaces runs test in a child of this test binary in a new
// mount and network namespace, and reports its result as the test's; it
// skips the test where namespaces cannot be made.
func runInOwnNamespaces(t *testing.T, test string) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: making mount and network namespaces needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	// GODEBUG=netdns=go: Go's own resolver, which reads the files the
	// child mounts; glibc's would read them too, but through whatever
	// modules nsswitch.conf names.
	cmd.Env = append(os.Environ(), localDialChildEnv+"=1", "GODEBUG=netdns=go")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWNS | unix.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		t.Skipf("skipped: cannot start the test in namespaces of its own: %v", err)
	case strings.Contains(string(out), "--- SKIP: "+test):
		t.Skipf("skipped in its namespaces:\n%s", out)
	case err != nil:
		t.Fatalf("in its namespaces: %v\n%s", err, out)
	}
	t.Logf("in its namespaces:\n%s", out)
}

// setUpLocalDialNamespace, in the child's namespaces, brings loopback up
// and mounts a hosts file with no localhost, a resolv.conf whose name
// server is on loopback with a search domain, and an nsswitch.conf that
// asks the files and then DNS.
func setUpLocalDialNamespace(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatalf("bringing loopback up: %v", err)
	}
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
