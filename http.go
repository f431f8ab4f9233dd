package localgrpc

import (
	"context"
	"io/fs"
	"net"
	"net/http"
	"sync"
)

// Listen listens on a socket address of the grammar — unix:PATH,
// unix:@NAME or HOST:PORT — as a Server does, so that servers of other
// stacks, such as connect-go's http.Handlers, serve on the same addresses
// with the same care: a unix socket is created with mode already set
// (0600 is the Server's default), a stale socket left by a dead server is
// replaced, and a live one is an error. Closing the listener removes the
// socket file it created. In-process addresses and grpc-go targets are
// errors: nothing listens on them.
func Listen(addr string, mode fs.FileMode) (net.Listener, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	if a.Kind == Inproc {
		return nil, addressError(addr, "an in-process address is served by a localgrpc.Server, not on a socket")
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
	s.once.Do(s.l.close)
	return nil
}

// HTTPClient returns an HTTP client that speaks HTTP/2 without TLS to the
// server at addr, a socket address of the grammar, and the base URL to
// give it: what a connect-go client needs to reach any of the addresses a
// Server or Listen serves, sockets included. Transparent compression is
// off. Call CloseIdleConnections on the client when done with it.
func HTTPClient(addr string) (*http.Client, string, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, "", err
	}
	var network, address string
	switch a.Kind {
	case Unix:
		network, address = "unix", a.Name
	case Abstract:
		network, address = "unix", "@"+a.Name
	case TCP:
		network, address = "tcp", a.Name
		if host, port, _ := net.SplitHostPort(a.Name); host == "" {
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
	return &http.Client{Transport: transport}, base, nil
}
