package localgrpc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
)

// Listen binds every address in addrs, or none of them.
// If any is malformed or cannot be bound, Listen returns an error naming
// each such address, and leaves nothing bound.
// [ParseListenAddresses] says which addresses Listen refuses before it binds
// any.
//
// Once Listen has returned, [NewClient] on any of the addresses works.
// Socket clients connect.
// Their calls, like in-process ones, wait until [Server.Serve] serves them,
// or until their context ends.
//
// A TCP address whose host is localhost, in any case, binds loopback
// (127.0.0.1, or ::1 where that fails).
// It asks no resolver, which might name an interface other machines reach.
// ":PORT" binds every interface, as net.Listen does.
//
// Listen may be called again, before or while Serve serves.
// What it binds then is served at once.
// Called after a stop, Listen returns an error wrapping
// grpc.ErrServerStopped.
func (s *Server) Listen(addrs ...string) error {
	if len(addrs) == 0 {
		return errors.New("localgrpc: Listen needs at least one address")
	}
	parsed, err := ParseListenAddresses(addrs...)
	if err != nil {
		return err
	}
	if s.isStopping() {
		return stoppedError("Listen")
	}
	// Binding a unix socket may wait on another server's check of a
	// stale socket: s.mu is not held meanwhile, so Stop and Addrs go on.
	bound, err := s.bind(parsed)
	if err != nil {
		return err
	}
	return s.add("Listen", bound)
}

// AddListener has the server serve l, a listener the caller made, beside
// the addresses of [Server.Listen].
// l may be one that systemd's socket activation passed on.
// l's address is in [Server.Addrs].
// The peer-credential policy applies to l if it is a unix socket.
//
// The server closes l when it stops.
// It removes no file itself: l's Close says what becomes of a unix socket's
// file.
//   - A [*net.UnixListener] from net.Listen or net.ListenUnix removes the
//     socket file it made, as Go's listeners do by default.
//   - Its maker keeps the file by calling its SetUnlinkOnClose(false)
//     before the server stops.
//   - One from net.FileListener, as systemd's socket activation passes
//     on, leaves the file.
//
// l must be a stream socket: unix (a path or, on Linux, an abstract name)
// or TCP.
// If AddListener returns an error, l is still the caller's.
func (s *Server) AddListener(l net.Listener) error {
	if l == nil {
		return errors.New("localgrpc: AddListener: the listener is nil")
	}
	a, err := listenerAddress(l.Addr())
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, b := range s.listeners {
		if b.net == l {
			s.mu.Unlock()
			return fmt.Errorf("localgrpc: AddListener: the listener on %s was already added", a)
		}
	}
	s.mu.Unlock()
	return s.add("AddListener", []*listener{{addr: a, net: l}})
}

func (s *Server) isStopping() bool { return s.stopping.Load() }

// add makes bound the server's, and serves it if Serve was called; after
// a stop it releases bound instead.
func (s *Server) add(op string, bound []*listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase >= draining {
		if op == "Listen" {
			for _, l := range bound {
				l.close(s)
			}
		}
		return stoppedError(op)
	}
	s.listeners = append(s.listeners, bound...)
	if s.phase == serving {
		for _, l := range bound {
			s.serve(l)
		}
	}
	return nil
}

// bind binds every address, or none: on errors it releases what it bound
// and returns them all.
func (s *Server) bind(addrs []Address) ([]*listener, error) {
	var bound []*listener
	var errs []error
	for _, a := range addrs {
		var l *listener
		var err error
		switch {
		case a.Kind == Inproc && s.notInproc != nil:
			err = fmt.Errorf("localgrpc: in-process address %q refused, never served around a control: %w", a, s.notInproc)
		case a.Kind == Shm && s.notShm != nil:
			err = fmt.Errorf("localgrpc: shm: address %q refused, never served around a control: %w", a, s.notShm)
		case a.Kind == Inproc:
			l, err = &listener{addr: a}, claimInproc(a, s)
		default:
			l, err = listen(a, s.cfg.socketMode)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		bound = append(bound, l)
	}
	if len(errs) > 0 {
		for _, l := range bound {
			l.close(s)
		}
		return nil, errors.Join(errs...)
	}
	return bound, nil
}

// ParseListenAddresses parses the addresses a [Server] is to listen on,
// as [Server.Listen] does before it binds any.
// Its error names every bad address at once: its Unwrap() []error gives
// one [*AddressError] for each.
// An address is bad if:
//   - [ParseAddress] refuses it;
//   - it is a grpc-go target, which names servers to dial;
//   - it was given before, in the same form or another ("unix:@x",
//     "unix-abstract:x").
//
// TCP port 0 may be given more than once: each binds a port of its own.
// What only binding tells, such as a port in use, is Server.Listen's
// error.
func ParseListenAddresses(addrs ...string) ([]Address, error) {
	var errs []error
	parsed := make([]Address, 0, len(addrs))
	first := map[Address]string{} // the form each was first given in
	for _, a := range addrs {
		p, err := ParseAddress(a)
		switch prev, seen := first[p]; {
		case err != nil:
			errs = append(errs, err)
		case p.Kind == Target:
			errs = append(errs, addressError(a, "a grpc-go target names servers to dial, not an address to listen on"))
		case seen && prev == a:
			errs = append(errs, addressError(a, "given twice"))
		case seen:
			errs = append(errs, addressError(a, "the same address as %q", prev))
		case p.Kind == TCP && strings.HasSuffix(p.HostPort, ":0"):
			parsed = append(parsed, p) // each port 0 is a port of its own
		default:
			first[p] = a
			parsed = append(parsed, p)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return parsed, nil
}

// listenerAddress is the address of the grammar a listener on addr
// serves.
func listenerAddress(addr net.Addr) (Address, error) {
	switch addr.Network() {
	case "unix":
		name := addr.String()
		switch {
		case name == "" || name == "@":
			return Address{}, errors.New("localgrpc: AddListener: the unix listener has no name to dial it by")
		case strings.HasPrefix(name, "@"):
			return Address{Kind: Abstract, Name: name[1:]}, nil
		}
		return Address{Kind: Unix, Path: name}, nil
	case "tcp", "tcp4", "tcp6":
		return parseTCP(addr.String())
	}
	return Address{}, fmt.Errorf("localgrpc: AddListener: a listener on %s %q cannot carry gRPC: it needs a stream socket, unix or tcp", addr.Network(), addr)
}

// A listener is one address a Server listens on.
type listener struct {
	addr Address
	net  net.Listener // nil for Inproc; a unix socket's for Shm
	path string       // Unix, created by the server: the socket file to remove at the end
	file os.FileInfo  // and the file as created, to remove only ours
}

// listen starts listening on a, which is not Inproc.
func listen(a Address, mode fs.FileMode) (*listener, error) {
	network, address, ok := a.Socket()
	switch {
	case !ok:
		return nil, addressError(a.String(), "a grpc-go target names servers to dial, not an address to listen on")
	case a.Path != "":
		return listenUnix(a, mode) // Unix, or Shm on a socket file
	case a.Kind != TCP:
		return listenNet(a, network, address)
	}
	// Socket's address is a client's: ":PORT" binds every interface, as
	// net.Listen does.
	if host, port, _ := net.SplitHostPort(a.HostPort); host != "" && isLocalhost(host) {
		return listenLoopback(a, port)
	}
	return listenNet(a, "tcp", a.HostPort)
}

func listenNet(a Address, network, address string) (*listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, listenError(a, err)
	}
	return &listener{addr: a, net: l}, nil
}

// listenLoopback listens on port of loopback, 127.0.0.1 or else ::1, for
// a, whose host is localhost: a resolver would ask the hosts file and
// then DNS, which may name an interface other machines reach, and
// NewClient dials localhost on loopback without asking (loopbackDial).
func listenLoopback(a Address, port string) (*listener, error) {
	l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		if l6, err6 := net.Listen("tcp6", net.JoinHostPort("::1", port)); err6 == nil {
			return &listener{addr: a, net: l6}, nil
		}
		return nil, listenError(a, err)
	}
	return &listener{addr: a, net: l}, nil
}

func listenError(a Address, err error) error {
	return &AddressError{Address: a.String(), Reason: fmt.Sprintf("cannot listen: %v", err), Err: err}
}

// String is where l really listens, in the address grammar.
func (l *listener) String() string {
	if l.addr.Kind == TCP {
		if a, err := parseTCP(l.net.Addr().String()); err == nil {
			return a.String()
		}
	}
	return l.addr.String()
}

// close stops listening: it releases an in-process name s holds, or
// closes the socket and removes its file, if it is still the one l
// created.
func (l *listener) close(s *Server) {
	if l.net == nil {
		releaseInproc(l.addr.Name, s)
		return
	}
	l.net.Close()
	if l.path != "" {
		if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.file) {
			os.Remove(l.path)
		}
	}
}
