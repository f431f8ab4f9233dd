package localgrpc_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
	_ "unsafe"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// TestPlaintextOnlyOnThisMachine checks NewClient's rule, by what each
// form of address says: plaintext by default where nothing leaves the
// machine, and an error naming the way out elsewhere, unless transport
// credentials are given either way. Building a client is lazy: nothing
// here is ever dialed.
func TestPlaintextOnlyOnThisMachine(t *testing.T) {
	other := manual.NewBuilderWithScheme("localgrpc-test-other")
	resolver.Register(other)

	local := []string{
		"127.0.0.1:443",
		"127.8.9.10:443",
		"[::1]:443",
		"localhost:443",
		"LOCALHOST:443",
		":443",
		"0.0.0.0:443", // a dial to an unspecified address stays on this machine
		"[::]:443",
		"dns:///localhost:443",
		"dns:///:443", // grpc-go's dns resolver asks for localhost
		"passthrough:///:443",
		"dns:///127.0.0.1:443",
		"dns:///[::1]:443",
		"passthrough:///127.0.0.1:443",
		"passthrough:///localhost:443",
		"unix:/tmp/localgrpc-never-dialed.sock",
		"unix:@localgrpc-never-dialed",
	}
	remote := []string{
		"192.0.2.10:443",
		"[2001:db8::1]:443",
		"svc.example.com:443",
		"localhost.example.com:443",
		// A trailing dot makes localhost a fully qualified DNS name:
		// glibc's hosts file lookup does not match it, so a DNS server
		// answers, with any address it likes.
		"localhost.:443",
		"LocalHost.:443",
		"dns:///localhost.:443",
		"dns://127.0.0.1:53/localhost.:443",
		"passthrough:///localhost.:443",
		"dns:///svc.example.com:443",
		"dns://8.8.8.8/svc.example.com:443",
		"dns:///192.0.2.10:443",
		"passthrough:///192.0.2.10:443",
		"passthrough:///svc.example.com:443",
		"dns:///:",
		"passthrough:///:",
		"localgrpc-test-other:///127.0.0.1:443", // another resolver may send it anywhere
	}
	for _, addr := range local {
		t.Run("local/"+addr, func(t *testing.T) {
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatalf("NewClient(%q) with no credentials: %v, want plaintext, as nothing leaves the machine", addr, err)
			}
			cc.Close()
		})
	}
	for _, addr := range remote {
		t.Run("remote/"+addr, func(t *testing.T) {
			cc, err := localgrpc.NewClient(addr)
			if err == nil {
				cc.Close()
				t.Fatalf("NewClient(%q) with no credentials succeeded: calls would go out in plaintext", addr)
			}
			var aerr *localgrpc.AddressError
			if !errors.As(err, &aerr) {
				t.Errorf("NewClient(%q): %v (%T), want an *AddressError that names the address and the way out", addr, err, err)
			}

			for name, opt := range map[string]localgrpc.ClientOption{
				"WithClientTransportCredentials(insecure)":           localgrpc.WithClientTransportCredentials(insecure.NewCredentials()),
				"WithClientTransportCredentials(tls)":                localgrpc.WithClientTransportCredentials(credentials.NewTLS(nil)),
				"WithGRPCDialOptions(WithTransportCredentials(...))": localgrpc.WithGRPCDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())),
			} {
				cc, err := localgrpc.NewClient(addr, opt)
				if err != nil {
					t.Errorf("NewClient(%q, %s): %v, want a client", addr, name, err)
					continue
				}
				cc.Close()
			}
		})
	}
}

// TestClientTransportCredentialsNil checks that a nil credentials value,
// a variable left unset, panics rather than meaning plaintext.
func TestClientTransportCredentialsNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("WithClientTransportCredentials(nil) did not panic")
		}
	}()
	localgrpc.WithClientTransportCredentials(nil)
}

// attack5: spellings of a host that look local but that DNS or the hosts
// file decides (glibc's inet_aton forms, trailing dots, names other than
// localhost, a link-local address, a zone on an IPv4 address or a name)
// must need credentials, as "localhost." does.

func TestAttack5DNSDecidedSpellingsNeedCredentials(t *testing.T) {
	for _, a := range []string{
		"127.1:443", "127.0.1:443", "0x7f.0.0.1:443", "0177.0.0.1:443", "2130706433:443", "127.0.0.01:443",
		"127.0.0.1.:443", "0.0.0.0.:443", "0:443", "[fe80::1%lo]:443", "[fe80::1]:443", "[::127.0.0.1]:443",
		"localhost.localdomain:443", "ip6-localhost:443", "127.0.0.1%lo:443", "localhost%lo:443", "localhost%2e:443",
		"[localhost.]:443", "LOCALHOST.:443", "dns:///localhost%2e:443", "dns:///localhost%2eevil.example:443",
		"passthrough:///localhost%2e:443", "passthrough:///127.0.0.1%2eevil.example:443", "dns:///127.1:443",
		"dns:///localhost.:443", "dns:///[fe80::1%25lo]:443", "dns:///0x7f000001:443", "dns:///localhost..:443",
		"dns://127.0.0.1:53/127.1:443", "passthrough:///%6cocalhost%2e:443", "passthrough:///[localhost.]:443",
	} {
		cc, err := localgrpc.NewClient(a)
		if err == nil {
			cc.Close()
			t.Errorf("NewClient(%q) without credentials succeeded: DNS decides where it goes", a)
			continue
		}
		var aerr *localgrpc.AddressError
		if !errors.As(err, &aerr) {
			t.Errorf("NewClient(%q): %v, want an *AddressError", a, err)
		}
	}
}

// TestPercentInHostNeverDecodesToAnotherHost: a TCP address whose
// host is an IPv4 loopback literal followed by "%..." is judged local
// (loopbackHost cuts an "IPv6 zone" off any host), but grpcTarget pastes
// the raw HOST:PORT into a passthrough URL that grpc-go percent-decodes:
// "127.0.0.1%2eevil.example:443" is dialed as the DNS name
// "127.0.0.1.evil.example:443", a name anyone may point anywhere, in
// plaintext. No network access: a recording dialer stands in for the dial.
func TestPercentInHostNeverDecodesToAnotherHost(t *testing.T) {
	const addr = "127.0.0.1%2eevil.example:443"
	cc, err := localgrpc.NewClient(addr)
	if err == nil {
		cc.Close()
	}
	var aerr *localgrpc.AddressError
	if errors.As(err, &aerr) {
		return // refused: held
	}

	// Where would it go? The same client with a dialer that only records.
	var mu sync.Mutex
	var dialed []string
	rec := grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, a)
		mu.Unlock()
		return nil, errors.New("recording dialer: not dialing")
	})
	cc2, err2 := localgrpc.NewClient(addr, localgrpc.WithGRPCDialOptions(rec))
	if err2 != nil {
		t.Fatalf("NewClient(%q) with no credentials: %v (not an *AddressError); with a recording dialer: %v", addr, err, err2)
	}
	defer cc2.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	echov1.NewEchoClient(cc2).Get(ctx, &echov1.EchoRequest{Text: "secret"})
	mu.Lock()
	defer mu.Unlock()
	t.Errorf("NewClient(%q) with no transport credentials succeeded (err=%v): judged on this machine, yet grpc-go dials %q, a DNS name that may resolve to any machine, in plaintext", addr, err, dialed)
}
