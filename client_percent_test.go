package localgrpc_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
	_ "unsafe" // go:linkname, to register a global server option as csm.EnableObservability does

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

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
