package localgrpc

import (
	"context"
	"crypto/tls"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Listen returns a [net.Listener] for a server of another stack, such as an
// [http.Server] serving connect-go's handlers.
// It is not [Server.Listen], with which a Server binds its own addresses.
// addr is a socket address of the grammar of [ParseAddress]: unix:PATH,
// unix:@NAME or HOST:PORT.
// Listen binds it with the care Server.Listen takes:
//   - no one reaches a unix socket before it has mode (0600 is the
//     Server's default);
//   - a stale socket left by a dead server is replaced, and a live one is
//     an error;
//   - of servers racing for one path, exactly one gets it.
//
// Closing the listener removes the socket file it created.
// In-process addresses, shm: addresses and grpc-go targets are errors.
// No socket of theirs serves another stack.
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

// HTTPClient returns an HTTP client that speaks HTTP/2 to the server at
// addr, and the base URL to give it.
// addr is a socket address of the grammar.
// The two are what a connect-go client needs to reach any of the addresses
// a Server or Listen serves, sockets included.
// It speaks without TLS unless given [WithHTTPClientTLS].
// Transparent compression is off.
// A connection whose server sends nothing for 20 seconds fails
// ([WithHTTPClientConnectTimeout]).
// Call CloseIdleConnections on the client when done with it.
//
// A Server (grpc-go) speaks only the gRPC protocol.
// A call to it in the Connect or gRPC-Web protocol fails at once with a
// *ProtocolError that says so.
// connect-go would report the bare HTTP status instead.
func HTTPClient(addr string, opts ...HTTPClientOption) (*http.Client, string, error) {
	cfg := httpClientConfig{connectTimeout: defaultConnectTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, "", err
	}
	network, address, ok := a.Socket()
	if !ok || a.Kind == Shm {
		return nil, "", addressError(addr, "an HTTP client needs a socket address: unix:PATH, unix:@NAME or HOST:PORT")
	}
	var protocols http.Protocols
	scheme := "http"
	if cfg.tls != nil {
		protocols.SetHTTP2(true)
		protocols.SetHTTP1(true) // where the server's ALPN offers no h2
		scheme = "https"
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	dialer := net.Dialer{Timeout: cfg.connectTimeout}
	transport := &http.Transport{
		Protocols:          &protocols,
		TLSClientConfig:    cfg.tls,
		DisableCompression: true,
		// The URL's host is only a name for sockets; every connection goes
		// to addr.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, address)
			if err != nil || cfg.connectTimeout <= 0 {
				return c, err
			}
			return newFirstBytesConn(c, cfg.connectTimeout), nil
		},
	}
	base := scheme + "://localhost"
	if a.Kind == TCP {
		base = scheme + "://" + address
	}
	return &http.Client{Transport: grpcOnlyCheck{transport, addr}}, base, nil
}

// defaultConnectTimeout is grpc-go's least connect timeout: a connection
// whose server has not answered by then fails, as a grpc-go client's does.
const defaultConnectTimeout = 20 * time.Second

// An HTTPClientOption configures the client [HTTPClient] returns.
type HTTPClientOption func(*httpClientConfig)

type httpClientConfig struct {
	tls            *tls.Config
	connectTimeout time.Duration
}

// WithHTTPClientTLS makes the client call over TLS configured by cfg.
// The base URL is then https, and HTTP/2 is agreed by ALPN.
// A cfg without ServerName verifies the base URL's host: "localhost" for
// a socket, the address's host for TCP.
func WithHTTPClientTLS(cfg *tls.Config) HTTPClientOption {
	return func(c *httpClientConfig) { c.tls = cfg }
}

// WithHTTPClientConnectTimeout bounds how long a new connection may wait
// for the server's first bytes.
// The wait covers the dial, then its TLS handshake or its HTTP/2 settings.
// A server that accepts and never answers then fails the call, as with
// grpc-go, instead of holding it forever.
// The default is 20 seconds, grpc-go's.
// 0 or less waits without bound.
func WithHTTPClientConnectTimeout(d time.Duration) HTTPClientOption {
	return func(c *httpClientConfig) { c.connectTimeout = d }
}

// firstBytesConn fails a read that waits longer than the connect timeout
// for the server's first bytes; once they come, reads wait as long as
// the exchange needs (a stream may be quiet for hours).
type firstBytesConn struct {
	net.Conn
	heard atomic.Bool
}

func newFirstBytesConn(c net.Conn, timeout time.Duration) net.Conn {
	c.SetReadDeadline(time.Now().Add(timeout))
	return &firstBytesConn{Conn: c}
}

func (c *firstBytesConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.heard.Load() && c.heard.CompareAndSwap(false, true) {
		c.Conn.SetReadDeadline(time.Time{})
	}
	return n, err
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
