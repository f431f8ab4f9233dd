package localgrpc

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Listen listens on a socket address of the grammar — unix:PATH,
// unix:@NAME or HOST:PORT — as [Server.Listen] does, so that servers of
// other stacks, such as connect-go's http.Handlers, serve on the same
// addresses with the same care: no one reaches a unix socket before it has
// mode (0600 is the Server's default), a stale socket left by a dead
// server is replaced, a live one is an error, and of servers racing for
// one path exactly one gets it. Closing the listener removes the
// socket file it created. In-process addresses and grpc-go targets are
// errors: nothing listens on them.
func Listen(addr string, mode fs.FileMode) (net.Listener, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	switch a.Kind {
	case Inproc:
		return nil, addressError(addr, "an in-process address is served by a localgrpc.Server, not on a socket")
	case Shm:
		return nil, addressError(addr, "a shm: address speaks localgrpc's own framing, served by a localgrpc.Server: listen on unix: for HTTP")
	}
	l, err := listen(a, mode)
	if err != nil {
		return nil, err
	}
	return &socketListener{Listener: l.net, l: l}, nil
}

// socketListener is a listener that removes its socket file on Close.
type socketListener struct {
	net.Listener
	l    *listener
	once sync.Once
}

func (s *socketListener) Close() error {
	s.once.Do(func() { s.l.close(nil) })
	return nil
}

// HTTPClient returns an HTTP client that speaks HTTP/2 without TLS to the
// server at addr, a socket address of the grammar, and the base URL to
// give it: what a connect-go client needs to reach any of the addresses a
// Server or Listen serves, sockets included. Transparent compression is
// off. Call CloseIdleConnections on the client when done with it.
//
// A Server (grpc-go) speaks only the gRPC protocol. A call to it in the
// Connect or gRPC-Web protocol fails at once with a *ProtocolError that
// says so, not with the bare HTTP status connect-go would report.
func HTTPClient(addr string) (*http.Client, string, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, "", err
	}
	var network, address string
	switch a.Kind {
	case Unix:
		network, address = "unix", a.Path
	case Abstract:
		network, address = "unix", "@"+a.Name
	case TCP:
		network, address = "tcp", a.HostPort
		if host, port, _ := net.SplitHostPort(a.HostPort); host == "" {
			address = net.JoinHostPort("localhost", port)
		}
	default:
		return nil, "", addressError(addr, "an HTTP client needs a socket address: unix:PATH, unix:@NAME or HOST:PORT")
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	var dialer net.Dialer
	transport := &http.Transport{
		Protocols:          &protocols,
		DisableCompression: true,
		// The URL's host is only a name for sockets; every connection goes
		// to addr.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, address)
		},
	}
	base := "http://localhost"
	if a.Kind == TCP {
		base = "http://" + address
	}
	return &http.Client{Transport: grpcOnlyCheck{transport, addr}}, base, nil
}

// A ProtocolError reports a call in a protocol the server does not speak.
type ProtocolError struct {
	Addr        string // the server's address
	ContentType string // the request's, which names its protocol
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("localgrpc: the server at %s speaks only the gRPC protocol, as grpc-go servers do, and refused a call of content type %s (Connect or gRPC-Web): call it with the gRPC protocol (connect.WithGRPC())", e.Addr, e.ContentType)
}

// grpcOnlyCheck recognizes a gRPC-only server's refusal of another
// protocol: HTTP 415 with a gRPC content type, as grpc-go answers.
type grpcOnlyCheck struct {
	next http.RoundTripper
	addr string
}

func (c grpcOnlyCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		return resp, err
	}
	sent := req.Header.Get("Content-Type")
	if !isGRPCContentType(resp.Header.Get("Content-Type")) || isGRPCContentType(sent) {
		return resp, nil
	}
	resp.Body.Close()
	return nil, &ProtocolError{Addr: c.addr, ContentType: sent}
}

func (c grpcOnlyCheck) CloseIdleConnections() {
	if ci, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// isGRPCContentType reports whether ct is the gRPC protocol's:
// application/grpc, optionally +codec or with parameters, but not
// gRPC-Web's application/grpc-web.
func isGRPCContentType(ct string) bool {
	rest, ok := strings.CutPrefix(ct, "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}
