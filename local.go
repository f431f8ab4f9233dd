package localgrpc

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
)

// OnThisMachine reports whether a names an endpoint on this machine by what
// it says, as NewClient decides it.
// Such an address is called in plaintext unless given credentials.
// Any other needs them.
// What a name resolves to, which may change, is not asked.
// An address on this machine is one of:
//   - an in-process name, a unix or abstract socket, or shm:;
//   - TCP to a loopback or unspecified IP address, to "localhost" or to
//     no host at all;
//   - a dns or passthrough target whose endpoint is such a host.
//
// A name that DNS resolves, "localhost." included, is not on this machine.
func (a Address) OnThisMachine() bool {
	switch a.Kind {
	case Inproc, Unix, Abstract, Shm:
		return true
	case TCP, Target:
		e, ok := endpointOf(a)
		return ok && loopbackHost(e.host)
	}
	return false
}

// An endpoint is the host and port a TCP address or a dns or passthrough
// target names.
type endpoint struct {
	host, port string
	// target is the endpoint as grpc-go reads it from the target, which
	// makes it the connection's authority.
	target string
}

// endpointOf returns the endpoint of a TCP address, or of a dns or
// passthrough target; false for any other address. A dns endpoint
// without a port has grpc-go's default, 443; a passthrough one without a
// port has none.
func endpointOf(a Address) (endpoint, bool) {
	if a.Kind == TCP {
		host, port, err := net.SplitHostPort(a.HostPort)
		return endpoint{host: host, port: port, target: a.HostPort}, err == nil
	}
	if a.Kind != Target {
		return endpoint{}, false
	}
	u, err := url.Parse(a.Target)
	if err != nil || (u.Scheme != "dns" && u.Scheme != "passthrough") {
		return endpoint{}, false
	}
	e := endpoint{target: strings.TrimPrefix(u.Path, "/")}
	if u.Opaque != "" {
		e.target = u.Opaque
	}
	e.host, e.port, err = net.SplitHostPort(e.target)
	if err == nil {
		// ":PORT" is localhost's, as for TCP: grpc-go's dns resolver
		// asks for localhost, and its passthrough dials ":PORT".
		return e, e.host != "" || e.port != ""
	}
	e.host, e.port = e.target, "" // dns allows a host with no port
	if u.Scheme == "dns" {
		e.port = "443"
	}
	return e, e.host != ""
}

// loopbackHost reports whether host, from a host:port, is this machine:
// empty (as ":PORT"), "localhost", a loopback IP address, or an
// unspecified one (0.0.0.0, ::), which a dial reaches on this machine, as
// Addrs reports a server listening on every interface. "localhost." is
// not: a trailing dot makes it a fully qualified DNS name, which a hosts
// file matching names as written (glibc's) does not answer, so the DNS
// server says where it goes.
func loopbackHost(host string) bool {
	if isLocalhost(host) {
		return true
	}
	if strings.Contains(host, ":") {
		host, _, _ = strings.Cut(host, "%") // an IPv6 literal's zone
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// isLocalhost reports whether host is "localhost", in any case, or empty,
// as in ":PORT".
func isLocalhost(host string) bool {
	return host == "" || strings.EqualFold(host, "localhost")
}

// localTarget is the grpc-go target of a, an address on this machine
// (see OnThisMachine) other than an in-process one, with the dial
// options that take a connection there and nowhere else, whatever
// resolvers are registered or given:
//   - The target's scheme is a resolver's of the connection's own
//     (localResolver), which answers with one address: the one a says.
//     No resolver registered (resolver.Register is global, and the last
//     of a scheme wins), nor one given with grpc.WithResolvers after it,
//     replaces it: grpc-go takes the first of a connection's resolvers
//     for a scheme, then the registered one.
//   - Its dialer dials that address alone and refuses any other.
//   - Its endpoint is the one grpc-go would read from a, so the
//     connection's authority stays the same.
func localTarget(addr string, a Address) (string, []grpc.DialOption, error) {
	var to, ep string // the address the connection goes to; its endpoint
	var dial func(context.Context) (net.Conn, error)
	switch a.Kind {
	case Unix, Abstract:
		// grpc-go reads unix: targets as URLs, percent-decoding them and
		// cutting them at "?" or "#", so that "unix:@x?y" would reach
		// another server's "@x": the socket is dialed by its exact
		// path or name.
		_, name, _ := a.Socket()
		to, ep = "localhost", "localhost"
		dial = func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", name)
		}
	default:
		e, _ := endpointOf(a)
		switch {
		case e.port == "":
			return "", nil, addressError(addr, "the passthrough target names no port to dial")
		case isLocalhost(e.host):
			to = net.JoinHostPort("localhost", e.port)
			ep, dial = to, loopbackDial(e.port)
		default:
			to, ep = net.JoinHostPort(e.host, e.port), e.target
			dial = func(ctx context.Context) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", to)
			}
		}
	}
	target := (&url.URL{Scheme: localScheme, Path: "/" + ep}).String()
	return target, []grpc.DialOption{
		grpc.WithResolvers(localResolver{to}),
		grpc.WithContextDialer(func(ctx context.Context, got string) (net.Conn, error) {
			if got != to {
				return nil, fmt.Errorf("localgrpc: %q is on this machine, at %q, but its connection was sent to %q: refused", addr, to, got)
			}
			return dial(ctx)
		}),
	}, nil
}

// localScheme is the scheme of localResolver.
const localScheme = "localgrpc-local"

// localResolver answers every target of its connection with addr.
type localResolver struct{ addr string }

func (r localResolver) Scheme() string { return localScheme }

func (r localResolver) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	_ = cc.UpdateState(resolver.State{Addresses: []resolver.Address{{Addr: r.addr}}})
	return r, nil
}

func (localResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (localResolver) Close()                                {}

// loopbackDial dials port on this machine's loopback, 127.0.0.1 and
// then ::1, whatever the target's host says. A resolver would ask the
// hosts file and then DNS for "localhost", and a DNS server may answer
// any address where the hosts file has no line for it (a container's,
// say) or where a search domain makes it another name; RFC 6761 says
// localhost is loopback, so it is not resolved at all. A dialer of its
// own also keeps an HTTPS_PROXY from carrying the call.
func loopbackDial(port string) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", port))
		if err == nil {
			return c, nil
		}
		if c, err6 := d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", port)); err6 == nil {
			return c, nil
		}
		return nil, err
	}
}

// localPlaintext is the plaintext of a connection that NewClient sends
// plaintext by default because its address is on this machine:
// insecure.NewCredentials(), whose handshake first refuses a connection
// that is not to this machine, before a byte is sent. It checks the
// connection whatever dialer made it, a user's own (grpc.WithContextDialer
// through WithGRPCDialOptions) included: a connection is to this machine
// if it is a unix socket's or its peer is a loopback IP address (a dial
// to an unspecified one, 0.0.0.0 or ::, reaches loopback).
type localPlaintext struct {
	credentials.TransportCredentials
	addr string // the address NewClient was given
}

func newLocalPlaintext(addr string) localPlaintext {
	return localPlaintext{insecure.NewCredentials(), addr}
}

func (c localPlaintext) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if !toThisMachine(conn) {
		return nil, nil, fmt.Errorf("localgrpc: %q is on this machine and gets plaintext by default, but its connection is to %s, which is not loopback or a unix socket; give transport credentials to dial elsewhere (insecure.NewCredentials() for plaintext on purpose)", c.addr, peerOf(conn))
	}
	return c.TransportCredentials.ClientHandshake(ctx, authority, conn)
}

func (c localPlaintext) Clone() credentials.TransportCredentials {
	return localPlaintext{c.TransportCredentials.Clone(), c.addr}
}

// toThisMachine reports whether conn is a unix socket's, or a TCP
// connection whose peer is a loopback address.
func toThisMachine(conn net.Conn) bool {
	if _, ok := conn.(*net.UnixConn); ok {
		return true
	}
	switch a := conn.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a != nil && a.IP.IsLoopback()
	case *net.UnixAddr:
		return a != nil
	}
	return false
}

// peerOf names the peer of conn, as "tcp 192.0.2.1:443".
func peerOf(conn net.Conn) string {
	if a := conn.RemoteAddr(); a != nil {
		return a.Network() + " " + a.String()
	}
	return "an unknown peer"
}
