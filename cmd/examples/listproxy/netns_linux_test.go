package listproxy_test

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/listproxy"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
)

// Two backends of one shard run in network namespaces of their own,
// reached over veth pairs; the proxy reaches both through one grpc-go
// target that lists their addresses, balanced round robin: one Backend of
// the proxy, beside an in-process one.
func TestBackendsInNetworkNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: making network namespaces and veth pairs needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("skipped: making veth pairs needs iproute2's ip: %v", err)
	}
	block := freeBlock(t)
	replica := [][]string{{"apple", "fig"}, {"kiwi"}}
	var listers []*lister
	var targets []string
	for i := range 2 {
		host, inside := block.Next(), block.Next().Next()
		block = inside.Next().Next() // the next /30
		ns := newNetns(t)
		ns.veth(t, host, inside)
		var l net.Listener
		ns.run(func() { l, _ = net.Listen("tcp", netip.AddrPortFrom(inside, 0).String()) })
		if l == nil {
			t.Fatalf("namespace %d: cannot listen on %s", i, inside)
		}
		lis := &lister{messages: replica}
		srv := localgrpc.NewServer()
		listv1.RegisterListStringsServer(srv, lis)
		if err := srv.AddListener(l); err != nil {
			l.Close()
			t.Fatal(err)
		}
		servertest.Serve(t, srv)
		listers = append(listers, lis)
		targets = append(targets, l.Addr().String())
	}

	local := serveLister(t, &lister{messages: [][]string{{"banana", "fig"}}}, "inproc:"+servertest.UniqueName())
	hosts := "iplist:///" + strings.Join(targets, ",")
	// The hosts are other machines as far as NewClient can tell: plaintext
	// to them is on purpose.
	p := dialProxy(t, []string{local, hosts}, listproxy.WithClientOptions(
		localgrpc.WithClientTransportCredentials(insecure.NewCredentials()),
		localgrpc.WithGRPCDialOptions(grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"round_robin": {}}]}`))))
	_, addrs := serveProxy(t, p, "unix:@"+servertest.UniqueName())

	// Round robin spreads calls over the hosts it has connected to: call
	// until both served one.
	deadline := time.Now().Add(waitLimit)
	for len(listers[0].calls()) == 0 || len(listers[1].calls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after %v, the namespaces' backends served %d and %d calls: want both to serve", waitLimit, len(listers[0].calls()), len(listers[1].calls()))
		}
		msgs, err := list(t, addrs[0])
		if want := []string{"apple", "banana", "fig", "kiwi"}; err != nil || !slices.Equal(slices.Concat(msgs...), want) {
			t.Fatalf("through the proxy: %q, %v; want %q", msgs, err, want)
		}
	}
	// Each backend was reached from the host's end of its own veth pair.
	for i, lis := range listers {
		want := netip.MustParseAddrPort(targets[i]).Addr()
		for _, c := range lis.calls() {
			from, err1 := netip.ParseAddrPort(fmt.Sprint(c.Addr))
			to, err2 := netip.ParseAddrPort(fmt.Sprint(c.LocalAddr))
			if err1 != nil || err2 != nil || to.Addr() != want || from.Addr() != want.Prev() {
				t.Errorf("backend %d served a call from %v to %v, want from %v to %v", i, c.Addr, c.LocalAddr, want.Prev(), want)
			}
		}
	}
}

// A netns is a network namespace the test made: a goroutine locked to a
// thread that left the process's namespace for a new, empty one runs the
// functions given to run there. Sockets keep the namespace they were made
// in, so a listener made by run accepts there from any goroutine. The
// namespace goes when the test ends, with the thread (a locked goroutine
// that returns takes its thread with it), its sockets and its end of the
// veth pair, whose other end goes with it; it would go as well if the
// test process died, leaving nothing behind.
type netns struct {
	tid int // of the thread in the namespace
	do  chan func()
}

// newNetns makes a network namespace, or skips the test if it cannot.
func newNetns(t *testing.T) *netns {
	ns := &netns{do: make(chan func())}
	made := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := unix.Unshare(unix.CLONE_NEWNET)
		ns.tid = unix.Gettid()
		made <- err
		if err != nil {
			return
		}
		for f := range ns.do {
			f()
		}
	}()
	if err := <-made; err != nil {
		t.Skipf("skipped: cannot make a network namespace (unshare CLONE_NEWNET): %v", err)
	}
	t.Cleanup(func() { close(ns.do) })
	return ns
}

// run runs f in the namespace, as do the programs f starts.
func (ns *netns) run(f func()) {
	done := make(chan struct{})
	ns.do <- func() { f(); close(done) }
	<-done
}

// vethSeq numbers the veth pairs of this process.
var vethSeq atomic.Uint32

// veth joins the namespace to the test's by a veth pair: host on the
// test's end, inside on the namespace's, both of a /30. It skips the test
// if the pair cannot be made, and removes it when the test ends.
func (ns *netns) veth(t *testing.T, host, inside netip.Addr) {
	// Names of at most 15 bytes, unique to this process and this pair.
	n := vethSeq.Add(1)
	hostName, insideName := fmt.Sprintf("lp%xh%x", os.Getpid(), n), fmt.Sprintf("lp%xn%x", os.Getpid(), n)
	if out, err := exec.Command("ip", "link", "add", hostName, "type", "veth", "peer", "name", insideName, "netns", fmt.Sprint(ns.tid)).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot make a veth pair: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// The pair may have gone with the namespace already.
		if out, err := exec.Command("ip", "link", "del", hostName).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
			t.Errorf("removing the veth pair %s: %v: %s", hostName, err, out)
		}
	})
	ip(t, "addr", "add", host.String()+"/30", "dev", hostName)
	ip(t, "link", "set", hostName, "up")
	ns.run(func() {
		ip(t, "addr", "add", inside.String()+"/30", "dev", insideName)
		ip(t, "link", "set", insideName, "up")
		// The namespace is the test's own: its loopback and its end of
		// the pair are all it has.
		ifs, err := net.Interfaces()
		var names []string
		for _, i := range ifs {
			names = append(names, i.Name)
		}
		if slices.Sort(names); err != nil || !slices.Equal(names, []string{"lo", insideName}) {
			t.Errorf("the namespace's interfaces are %q, %v; want only lo and %s", names, err, insideName)
		}
	})
}

// ip runs iproute2's ip with args, failing the test if it fails.
func ip(t *testing.T, args ...string) {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// freeBlock is the first address of a /29 of 198.18.0.0/15, the range set
// aside for testing networks (RFC 2544), that no interface of the
// machine's namespace is on, chosen from the process id so that
// concurrent runs take different ones.
func freeBlock(t *testing.T) netip.Addr {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	const blocks = 1 << 14 // /29s in the /15
	start := os.Getpid() % blocks
	for i := range blocks {
		b := (start + i) % blocks
		base := netip.AddrFrom4([4]byte{198, 18 + byte(b>>13), byte(b >> 5), byte(b<<3) & 0xff})
		block := netip.PrefixFrom(base, 29)
		taken := false
		for _, a := range ifaddrs {
			if n, ok := a.(*net.IPNet); ok {
				if p, ok := netip.AddrFromSlice(n.IP); ok {
					ones, _ := n.Mask.Size()
					if netip.PrefixFrom(p.Unmap(), ones).Masked().Overlaps(block) {
						taken = true
					}
				}
			}
		}
		if !taken {
			return base
		}
	}
	t.Skip("skipped: every /29 of 198.18.0.0/15 is in use")
	return netip.Addr{}
}

// iplist is a grpc-go resolver of targets that list their addresses,
// "iplist:///10.0.0.1:80,10.0.0.2:80", as the ipv4: scheme of gRPC's
// naming document does; grpc-go has no resolver for that scheme.
type iplist struct{}

func init() { resolver.Register(iplist{}) }

func (iplist) Scheme() string { return "iplist" }

func (iplist) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	var eps []resolver.Endpoint
	for a := range strings.SplitSeq(target.Endpoint(), ",") {
		eps = append(eps, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	if err := cc.UpdateState(resolver.State{Endpoints: eps}); err != nil {
		return nil, err
	}
	return iplist{}, nil
}

func (iplist) ResolveNow(resolver.ResolveNowOptions) {}
func (iplist) Close()                                {}
