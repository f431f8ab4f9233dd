package localgrpc

import (
	"net"
	"net/url"
	"strings"
)

// onThisMachine reports whether a names an endpoint on this machine by
// what it says, not by what a name resolves to, which may change: an
// in-process name, a unix or abstract socket, or TCP to a loopback IP
// or unspecified address, to "localhost" or to no host at all; for a grpc-go target, a
// dns or passthrough one whose endpoint is such a host. Any other target
// (another resolver's scheme, a name that may resolve anywhere) is not.
func onThisMachine(a Address) bool {
	switch a.Kind {
	case Inproc, Unix, Abstract:
		return true
	case TCP:
		host, _, err := net.SplitHostPort(a.HostPort)
		return err == nil && loopbackHost(host)
	case Target:
		u, err := url.Parse(a.Target)
		if err != nil || (u.Scheme != "dns" && u.Scheme != "passthrough") {
			return false
		}
		endpoint := strings.TrimPrefix(u.Path, "/")
		if u.Opaque != "" {
			endpoint = u.Opaque
		}
		host, _, err := net.SplitHostPort(endpoint)
		if err != nil {
			host = endpoint // dns allows a host with no port
		}
		return host != "" && loopbackHost(host)
	}
	return false
}

// loopbackHost reports whether host, from a host:port, is this machine:
// empty (as ":PORT"), "localhost", a loopback IP address, or an
// unspecified one (0.0.0.0, ::), which a dial reaches on this machine, as
// Addrs reports a server listening on every interface. "localhost." is
// not: a trailing dot makes it a fully qualified DNS name, which a hosts
// file matching names as written (glibc's) does not answer, so the DNS
// server says where it goes.
func loopbackHost(host string) bool {
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	if strings.Contains(host, ":") {
		host, _, _ = strings.Cut(host, "%") // an IPv6 literal's zone
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
