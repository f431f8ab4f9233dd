package localgrpc_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// countingInterceptor counts the calls a server receives.
func countingInterceptor(n *atomic.Int64) localgrpc.ServerOption {
	return localgrpc.WithServerUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		n.Add(1)
		return h(ctx, req)
	})
}

// TestAddrsWithOddCharsReachServer: every address Addrs reports must be
// dialable with NewClient and reach that very server. Socket paths and
// abstract names with URL-special characters ('%', '?', '#') are valid in
// the grammar (ParseAddress accepts them, Listen binds them) but NewClient
// hands them to grpc-go as URL targets, which decodes '%XX' in absolute
// paths and cuts at '?' and '#'.
func TestAddrsWithOddCharsReachServer(t *testing.T) {
	dir := t.TempDir()
	name := uniqueName(t)
	cases := []string{
		"unix:" + filepath.Join(dir, "plain.sock"),
		"unix:" + filepath.Join(dir, "a%41.sock"),
		"unix:" + filepath.Join(dir, "q?x.sock"),
		"unix:" + filepath.Join(dir, "h#x.sock"),
		"unix:" + filepath.Join(dir, "sp ace.sock"),
		"unix:@" + name + "-plain",
		"unix:@" + name + "?x",
		"unix:@" + name + "#x",
		"unix:@/" + name + "%41",
	}
	for _, addr := range cases {
		t.Run(addr, func(t *testing.T) {
			var n atomic.Int64
			srv := newEchoServer(countingInterceptor(&n))
			serve(t, srv, addr)
			got := srv.Addrs()[0]
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			_, err := dial(t, got).Get(ctx, &echov1.EchoRequest{Text: "x"})
			if err != nil || n.Load() != 1 {
				t.Errorf("Listen(%q), Addrs()[0]=%q: NewClient call: err=%v, calls the server saw=%d; want nil, 1", addr, got, err, n.Load())
			}
		})
	}
}

// TestOddAbstractNameReachesOnlyItsServer shows the consequence: a
// client of the server on "unix:@NAME?x" is connected to whoever listens on
// "unix:@NAME" — any local user can claim an abstract name.
func TestOddAbstractNameReachesOnlyItsServer(t *testing.T) {
	name := uniqueName(t)
	var decoy, real atomic.Int64
	serve(t, newEchoServer(countingInterceptor(&decoy)), "unix:@"+name)
	srv := newEchoServer(countingInterceptor(&real))
	serve(t, srv, "unix:@"+name+"?tenant=1")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, err := dial(t, srv.Addrs()[0]).Get(ctx, &echov1.EchoRequest{Text: "secret"})
	if decoy.Load() != 0 || real.Load() != 1 {
		t.Errorf("call to %q: err=%v; the decoy on unix:@%s got %d calls, the real server %d; want 0 and 1", srv.Addrs()[0], err, name, decoy.Load(), real.Load())
	}
}

// TestListenPortZeroTwice: two "127.0.0.1:0" listeners are two
// distinct ports, as net.Listen twice would give; Listen refuses them.
func TestListenPortZeroTwice(t *testing.T) {
	srv := newEchoServer()
	err := srv.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Errorf("Listen(127.0.0.1:0, 127.0.0.1:0): %v; want two ports", err)
		return
	}
	srv.Stop()
}

// TestNewClientBadAddressIsAddressError: every odd input gives an
// *AddressError naming it from both ParseAddress and NewClient, never
// an error of grpc-go's about a target the user never wrote.
func TestNewClientBadAddressIsAddressError(t *testing.T) {
	for _, s := range []string{
		"", " ", "inproc:", "unix:", "unix:@", "unix-abstract:", "unix://rel", ":", "host", "h:99999", "h:-1", "h:x", "foo://bar", "unix:/a\x00b", "[::1", "::1:80",
		"localhost\x00:80", "exa\tmple.com:80", "passthrough:///%zz:80", "dns:///%zz:80", "dns:///localhost%00:80", "passthrough:///a\x00:80",
	} {
		_, perr := localgrpc.ParseAddress(s)
		cc, err := localgrpc.NewClient(s)
		if cc != nil {
			cc.Close()
		}
		for fn, err := range map[string]error{"ParseAddress": perr, "NewClient": err} {
			var ae *localgrpc.AddressError
			if !errors.As(err, &ae) || ae.Address != s {
				t.Errorf("%s(%q) = %v, want an *AddressError naming it", fn, s, err)
			}
		}
	}
}

// TestNewClientRefusesWhatCannotBeDialed: an address ParseAddress
// accepts that no dial can reach gets an *AddressError from NewClient
// that names it.
func TestNewClientRefusesWhatCannotBeDialed(t *testing.T) {
	for _, s := range []string{"passthrough:///localhost", "passthrough:///127.0.0.1"} {
		cc, err := localgrpc.NewClient(s)
		if cc != nil {
			cc.Close()
		}
		var ae *localgrpc.AddressError
		if !errors.As(err, &ae) || ae.Address != s {
			t.Errorf("NewClient(%q) = %v, want an *AddressError naming it", s, err)
		}
	}
}

// FuzzParseAddress: every error is an *AddressError naming the
// input; every parsed address's String parses back to the same address
// and is stable.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"inproc:x", "unix:/a", "unix:@a", "unix-abstract:a", "a:1", ":1", "[::1]:1", "dns:///a:1", "unix:////a", "[unix]:1", "x:/y", "a:b:c", "%", "[%25]:1", "unix://@a", "unix-abstract:@a",
		"localhost\x00:80", "exa\tmple.com:80", "passthrough:///%zz:80", "dns:///%zz:80", "dns:///:80", "passthrough:///:80", "passthrough:///localhost"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := localgrpc.ParseAddress(s)
		if err != nil {
			var ae *localgrpc.AddressError
			if !errors.As(err, &ae) || ae.Address != s {
				t.Errorf("ParseAddress(%q): %T %v, want an *AddressError naming it", s, err, err)
			}
			return
		}
		if a.Kind != localgrpc.Inproc {
			// Any error of NewClient's names the address as given.
			cc, err := localgrpc.NewClient(s)
			if err == nil {
				cc.Close()
			} else if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Errorf("NewClient(%q): %v, which does not name the address", s, err)
			}
		}
		b, err := localgrpc.ParseAddress(a.String())
		if err != nil || b != a || b.String() != a.String() {
			t.Errorf("ParseAddress(%q) = %+v; String %q parses as %+v, %v", s, a, a.String(), b, err)
		}
	})
}
