package localgrpc

import (
	"context"
	"net"
	"net/url"
	"strings"

	"google.golang.org/grpc"
)

// onThisMachine reports whether a names an endpoint on this machine by
// what it says, not by what a name resolves to, which may change: an
// in-process name, a unix or abstract socket, or TCP to a loopback IP
// or unspecified address, to "localhost" or to no host at all; for a grpc-go target, a
// dns or passthrough one whose endpoint is such a host. Any other target
// (another resolver's scheme, a name that may resolve anywhere) is not.
func onThisMachine(a Address) bool {
	switch a.Kind {
	case Inproc, Unix, Abstract, Shm:
		return true
	case TCP, Target:
		host, _, ok := endpointOf(a)
		return ok && loopbackHost(host)
	}
	return false
}

// endpointOf returns the host and port of a TCP address, or of a dns or
// passthrough target's endpoint; false for any other address. A dns
// endpoint without a port has grpc-go's default, 443; a passthrough one
// without a port has none.
func endpointOf(a Address) (host, port string, ok bool) {
	if a.Kind == TCP {
		host, port, err := net.SplitHostPort(a.HostPort)
		return host, port, err == nil
	}
	if a.Kind != Target {
		return "", "", false
	}
	u, err := url.Parse(a.Target)
	if err != nil || (u.Scheme != "dns" && u.Scheme != "passthrough") {
		return "", "", false
	}
	endpoint := strings.TrimPrefix(u.Path, "/")
	if u.Opaque != "" {
		endpoint = u.Opaque
	}
	host, port, err = net.SplitHostPort(endpoint)
	if err != nil {
		host, port = endpoint, "" // dns allows a host with no port
		if u.Scheme == "dns" {
			port = "443"
		}
	}
	return host, port, host != ""
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

// loopbackDialer dials port on this machine's loopback, 127.0.0.1 and
// then ::1, whatever the target's host says. A resolver would ask the
// hosts file and then DNS for "localhost", and a DNS server may answer
// any address where the hosts file has no line for it (a container's,
// say) or where a search domain makes it another name; RFC 6761 says
// localhost is loopback, so it is not resolved at all. A dialer of its
// own also keeps an HTTPS_PROXY from carrying the call.
func loopbackDialer(port string) grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", port))
		if err == nil {
			return c, nil
		}
		if c, err6 := d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", port)); err6 == nil {
			return c, nil
		}
		return nil, err
	})
}
