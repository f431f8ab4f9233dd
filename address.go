package localgrpc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
	"google.golang.org/grpc/resolver"
)

// AddressKind is the transport an [Address] names.
type AddressKind uint8

const (
	// Inproc is an in-process channel: "inproc:NAME".
	Inproc AddressKind = iota + 1
	// Unix is a unix socket file: "unix:PATH" or "unix://ABSPATH".
	Unix
	// Abstract is a Linux abstract unix socket, which has no file:
	// "unix:@NAME" or "unix-abstract:NAME".
	Abstract
	// TCP is "HOST:PORT" or ":PORT".
	TCP
	// Target is any other grpc-go target, such as "dns:///host:port",
	// for clients only: grpc-go's resolvers and load balancing serve it.
	Target
	// Shm is localgrpc's own transport between two processes of one
	// machine, on a unix socket file ("shm:PATH") or an abstract socket
	// ("shm:@NAME").
	Shm
)

func (k AddressKind) String() string {
	switch k {
	case Inproc:
		return "inproc"
	case Unix:
		return "unix"
	case Abstract:
		return "abstract"
	case TCP:
		return "tcp"
	case Target:
		return "target"
	case Shm:
		return "shm"
	}
	return fmt.Sprintf("AddressKind(%d)", uint8(k))
}

// An Address is where a [Server] listens or where [NewClient] connects.
// [ParseAddress] parses it.
// The server, NewClient and the CLI share the grammar.
// Kind says which one field holds the address.
type Address struct {
	Kind AddressKind
	// Name is the name of an in-process channel (Inproc) or of an abstract
	// socket, without its "@" (Abstract, and Shm on an abstract socket).
	Name string
	// Path is the path of a unix socket file (Unix, and Shm on a socket
	// file).
	Path string
	// HostPort is a TCP address, "host:port" with a numeric port (TCP).
	HostPort string
	// Target is a whole grpc-go target, such as "dns:///host:443" (Target).
	Target string
}

// String returns the address in the grammar's canonical form, which
// ParseAddress parses back to a.
func (a Address) String() string {
	switch a.Kind {
	case Inproc:
		return "inproc:" + a.Name
	case Unix:
		if strings.HasPrefix(a.Path, "//") {
			// "unix://" would read the first element as an authority.
			return "unix://" + a.Path
		}
		return "unix:" + a.Path
	case Abstract:
		return "unix:@" + a.Name
	case TCP:
		// A host named as a scheme of the grammar ("[unix]:80") would read
		// as that scheme without its brackets.
		if host, port, err := net.SplitHostPort(a.HostPort); err == nil && isScheme(host) {
			return "[" + host + "]:" + port
		}
		return a.HostPort
	case Target:
		return a.Target
	case Shm:
		if a.Path == "" {
			return "shm:@" + a.Name
		}
		if strings.HasPrefix(a.Path, "//") {
			return "shm://" + a.Path
		}
		return "shm:" + a.Path
	}
	return a.Name
}

// Socket returns the network and address that [net.Dial] takes to reach a:
//   - a unix socket file, and shm: on one: "unix" and its path;
//   - an abstract socket, and shm: on one: "unix" and "@" followed by its
//     name, as Go writes an abstract name;
//   - TCP: "tcp" and its host and port, an empty host written "localhost".
//
// ok is false for an in-process address and a grpc-go target, which have
// no socket.
// A [Server] given ":PORT" listens on every interface, as [net.Listen]
// does; Socket names where a client finds it.
func (a Address) Socket() (network, address string, ok bool) {
	switch {
	case a.Kind == TCP:
		if host, port, err := net.SplitHostPort(a.HostPort); err == nil && host == "" {
			return "tcp", net.JoinHostPort("localhost", port), true
		}
		return "tcp", a.HostPort, true
	case a.Kind != Unix && a.Kind != Abstract && a.Kind != Shm:
		return "", "", false
	case a.Path != "":
		return "unix", a.Path, true
	}
	return "unix", "@" + a.Name, true
}

// isScheme reports whether s is one of the grammar's own schemes.
func isScheme(s string) bool {
	return s == "inproc" || s == "unix" || s == "unix-abstract" || s == "shm"
}

// An AddressError says what is wrong with an address.
type AddressError struct {
	Address string
	Reason  string
	Err     error // the underlying error, if any
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("localgrpc: address %q: %s", e.Address, e.Reason)
}

func (e *AddressError) Unwrap() error { return e.Err }

func addressError(addr, format string, args ...any) *AddressError {
	return &AddressError{Address: addr, Reason: fmt.Sprintf(format, args...)}
}

// ParseAddress parses an address of the grammar:
//
//	inproc:NAME                  an in-process channel
//	unix:PATH, unix://ABSPATH    a unix socket file
//	unix:@NAME, unix-abstract:NAME  a Linux abstract socket
//	shm:PATH, shm:@NAME          localgrpc's transport between processes,
//	                             on a socket file or an abstract socket
//	HOST:PORT, :PORT             TCP
//	dns:///host:port, ...        for clients, any target of a registered
//	                             grpc-go resolver (kind Target)
//
// A socket's PATH or NAME is taken as written.
// grpc-go reads unix:, unix:// and unix-abstract: addresses as URLs:
//   - it decodes percent escapes;
//   - it ends the path at '?' or '#';
//   - it reads unix-abstract:///x as the name "/x".
//
// Here none of that happens, so that an address names one socket whatever
// it holds.
// The same string given to a grpc-go client, or grpcurl, reaches the same
// socket only when both hold:
//   - it holds no '%', '?' or '#';
//   - after unix-abstract:, it does not begin with '/'.
//
// A target's scheme is in lower case.
// Its endpoint follows "///" or an authority: "dns:///host:443".
// grpc-go's "dns:host:443" and "DNS:///host:443" are refused with the
// form to use.
//
// A HOST, and a dns target's host, holds only what a host name, an IP
// address and an IPv6 zone may.
// So it holds no control character, space or character that is not ASCII.
// A target is a URL, as grpc-go reads it.
// Its percent escapes are valid.
// Neither it nor what they decode to holds a control character.
//
// Errors are *AddressError and name the address and what is wrong.
func ParseAddress(s string) (Address, error) {
	return parseAddress(s, runtime.GOOS)
}

func parseAddress(s, goos string) (Address, error) {
	if strings.TrimSpace(s) == "" {
		return Address{}, addressError(s, "empty address")
	}
	scheme, rest, hasScheme := strings.Cut(s, ":")
	switch {
	case hasScheme && scheme == "inproc":
		if rest == "" {
			return Address{}, addressError(s, "no name after inproc:")
		}
		return Address{Kind: Inproc, Name: rest}, nil
	case hasScheme && scheme == "unix":
		return parseUnix(s, rest, goos)
	case hasScheme && scheme == "unix-abstract":
		return abstract(s, rest, goos)
	case hasScheme && scheme == "shm":
		return parseShm(s, rest, goos)
	}
	if strings.Contains(s, "://") || hasScheme && strings.HasPrefix(rest, "/") {
		if resolver.Get(scheme) != nil {
			return parseTarget(s)
		}
		if lower := strings.ToLower(scheme); lower != scheme && (resolver.Get(lower) != nil || isScheme(lower)) {
			return Address{}, addressError(s, "the scheme %q is written in lower case here: %s%s", scheme, lower, s[len(scheme):])
		}
		return Address{}, addressError(s, "unknown scheme %q: want inproc:, unix:, unix-abstract:, shm:, HOST:PORT or the target of a grpc-go resolver", scheme)
	}
	a, err := parseTCP(s)
	if err != nil && hasScheme && !strings.HasPrefix(rest, "/") && resolver.Get(strings.ToLower(scheme)) != nil {
		// grpc-go reads "dns:host:port" as a URL with an opaque part;
		// the grammar takes targets in one form, with their slashes.
		return Address{}, addressError(s, "a target of the %s resolver is written %s:///ENDPOINT here, as in %s:///%s", strings.ToLower(scheme), strings.ToLower(scheme), strings.ToLower(scheme), rest)
	}
	return a, err
}

// parseTarget parses s, a target of a registered grpc-go resolver, as
// grpc-go will: a URL, whose decoded parts hold no control character. A
// dns target's host must be a host's.
func parseTarget(s string) (Address, error) {
	if c, ok := controlIn(s); ok {
		return Address{}, addressError(s, "the target contains the control character %q", c)
	}
	u, err := url.Parse(s)
	var esc url.EscapeError
	switch {
	case errors.As(err, &esc):
		return Address{}, &AddressError{Address: s, Err: err, Reason: fmt.Sprintf(`%q is not a percent escape: a "%%" takes two hexadecimal digits, and "%%25" stands for "%%" itself`, string(esc))}
	case err != nil:
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the rest names s as written
		}
		return Address{}, &AddressError{Address: s, Err: err, Reason: fmt.Sprintf("not a URL, as a grpc-go target must be: %v", err)}
	}
	if c, ok := controlIn(u.Host + u.Path); ok {
		return Address{}, addressError(s, "the target's percent escapes decode to the control character %q", c)
	}
	a := Address{Kind: Target, Target: s}
	if e, ok := endpointOf(a); ok && u.Scheme == "dns" {
		if reason := badHost(e.host); reason != "" {
			return Address{}, addressError(s, "%s", reason)
		}
	}
	return a, nil
}

// controlIn returns the first ASCII control character of s.
func controlIn(s string) (string, bool) {
	i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
	if i < 0 {
		return "", false
	}
	return s[i : i+1], true
}

// badHost says what is wrong with host, of a HOST:PORT, or "" if
// nothing is: it may hold the bytes of a host name, of an IP address in
// brackets and of an IPv6 zone, as an HTTP Host header may.
func badHost(host string) string {
	if httpguts.ValidHostHeader(host) {
		return ""
	}
	for i := 0; i < len(host); {
		_, n := utf8.DecodeRuneInString(host[i:])
		c := host[i : i+n]
		i += n
		switch {
		case httpguts.ValidHostHeader(c):
		case c[0] < 0x20 || c[0] == 0x7f:
			return fmt.Sprintf("the host contains the control character %q", c)
		case c[0] >= utf8.RuneSelf:
			return fmt.Sprintf("the host contains %q: write a host name that is not ASCII in its ASCII (IDNA) form", c)
		default:
			return fmt.Sprintf("the host contains %q, which no host name or IP address has", c)
		}
	}
	return "the host has characters no host name or IP address has"
}

func parseUnix(s, rest, goos string) (Address, error) {
	if name, ok := strings.CutPrefix(rest, "@"); ok {
		return abstract(s, name, goos)
	}
	path := rest
	if p, ok := strings.CutPrefix(rest, "//"); ok {
		if !strings.HasPrefix(p, "/") {
			return Address{}, addressError(s, "unix:// needs an absolute path, as in unix:///run/x.sock; use unix:PATH for a relative one")
		}
		path = p
	}
	if path == "" {
		return Address{}, addressError(s, "no socket path after unix:")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return Address{}, addressError(s, "the socket path contains a NUL byte")
	}
	return Address{Kind: Unix, Path: path}, nil
}

// parseShm parses a shm: address, whose socket is named as a unix one's:
// a path, //ABSPATH, or @NAME.
func parseShm(s, rest, goos string) (Address, error) {
	if goos != "linux" && goos != "android" {
		return Address{}, addressError(s, "the shm: transport exists only on Linux, not on %s", goos)
	}
	if rest == "" {
		return Address{}, addressError(s, "no socket path or @name after shm:")
	}
	a, err := parseUnix(s, rest, goos)
	if err != nil {
		return Address{}, err
	}
	if a.Kind == Abstract {
		return Address{Kind: Shm, Name: a.Name}, nil
	}
	return Address{Kind: Shm, Path: a.Path}, nil
}

func abstract(s, name, goos string) (Address, error) {
	if goos != "linux" && goos != "android" {
		return Address{}, addressError(s, "abstract unix sockets exist only on Linux, not on %s", goos)
	}
	if name == "" {
		return Address{}, addressError(s, "no name for the abstract socket")
	}
	if len(name) > maxSocketPath {
		// The address holds a NUL before the name: one byte less than
		// a path's 108.
		return Address{}, addressError(s, "the abstract socket name is %d bytes long; Linux allows at most %d", len(name), maxSocketPath)
	}
	return Address{Kind: Abstract, Name: name}, nil
}

func parseTCP(s string) (Address, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Address{}, &AddressError{Address: s, Reason: "want inproc:NAME, unix:PATH, unix:@NAME, HOST:PORT or :PORT", Err: err}
	}
	if reason := badHost(host); reason != "" {
		return Address{}, addressError(s, "%s", reason)
	}
	n, err := strconv.Atoi(port)
	switch {
	case err != nil && host == "":
		return Address{}, &AddressError{Address: s, Reason: fmt.Sprintf("port %q is not a number", port), Err: err}
	case err != nil:
		return Address{}, &AddressError{Address: s, Reason: fmt.Sprintf("port %q is not a number, and %q is not a known scheme", port, host), Err: err}
	case n < 0 || n > 65535:
		return Address{}, addressError(s, "port %d is out of range 0-65535", n)
	}
	return Address{Kind: TCP, HostPort: net.JoinHostPort(host, strconv.Itoa(n))}, nil
}
