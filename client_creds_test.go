package localgrpc_test

import (
	"errors"
	"testing"

	"github.com/localgrpc/localgrpc"
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
