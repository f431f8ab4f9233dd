package localgrpc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/shm"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// WithShmSpin has the reader of each shm: connection's ring look for
// records spin times before it sleeps on its eventfd.
// A call then skips a wake-up, at the cost of a core kept busy between
// calls.
// It applies only where GOMAXPROCS is above 2.
// At fewer processors a spinning reader would starve the goroutine it waits
// for.
// So it is off there, whatever spin says.
// It is off (0) by default.
func WithShmSpin(spin int) ServerOption {
	return func(c *serverConfig) { c.shmSpin = spin }
}

// WithClientShmSpin is [WithShmSpin] for the client's side of shm:
// connections.
func WithClientShmSpin(spin int) ClientOption {
	return func(c *clientConfig) { c.shmSpin = spin }
}

// shmConns are the shm: connections a Server serves, for its stops to
// end.
type shmConns struct {
	mu       sync.Mutex
	conns    map[*shm.ServerConn]bool
	stopped  bool
	graceful bool           // stop drains: no Stop came yet
	open     sync.WaitGroup // a count per connection reserved
}

// shmHandshake bounds how long a client may take to say its hello.
const shmHandshake = 10 * time.Second

// serveShm accepts l's connections until l closes.
func (s *Server) serveShm(l *listener) {
	var backoff time.Duration
	for {
		nc, err := l.net.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of descriptors, say: wait, as net/http and grpc-go do.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			select {
			case s.failed <- fmt.Errorf("localgrpc: serving %s: %w", l, err):
			default:
			}
			return
		}
		backoff = 0
		s.serving.Go(func() { s.serveShmConn(nc) })
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// serveShmConn serves one client's connection until it ends.
func (s *Server) serveShmConn(nc net.Conn) {
	info := socketVerdict(nc, s.cfg.peers, s.cfg.logger)
	info.CommonAuthInfo = credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}
	p := &peer.Peer{Addr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr(), AuthInfo: info}
	bind := func(closed context.Context) grpc.ClientConnInterface {
		return inprocconn.Bind(s.channel, inprocconn.Conn{Peer: p, Encode: true, InlineUnary: true, Drains: true, Closed: closed})
	}
	// Counted before its first call can come: a drain waits for it.
	if !s.shm.reserve() {
		nc.Close()
		return
	}
	defer s.shm.open.Done()
	nc.SetDeadline(time.Now().Add(shmHandshake))
	sc, err := shm.Serve(nc, bind, s.shmMaxRecv(), info.denial(), shm.Options{Spin: s.cfg.shmSpin})
	if err != nil {
		s.cfg.logger.Debug("localgrpc: a shm: client failed its hello", "addr", nc.LocalAddr().String(), "err", err)
		return
	}
	nc.SetDeadline(time.Time{})
	if !s.shm.add(sc) {
		return
	}
	<-sc.Done()
	// The handlers still running end on their own, their contexts
	// cancelled: Stop waits for none, and GracefulStop for all, through
	// the server's channel.
	sc.Abort()
	s.shm.remove(sc)
}

// shmMaxRecv bounds what a shm: connection gathers of one request: the
// server's receive limit, which its channel enforces.
func (s *Server) shmMaxRecv() int {
	n := 4 << 20 // grpc-go's default
	for _, l := range s.cfg.limits {
		if l.recv {
			n = l.n
		}
	}
	return max(n, 0)
}

// reserve counts a connection in, unless the server stopped.
func (c *shmConns) reserve() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	c.open.Add(1)
	return true
}

// add keeps sc for stop to reach, whatever came first: the lock orders
// add and stop, and a connection accepted while the server drains is
// still one a later Stop must close. It reports false, with sc closed,
// once the server stopped for good; a draining server tells sc to go
// away.
func (c *shmConns) add(sc *shm.ServerConn) bool {
	c.mu.Lock()
	if c.stopped && !c.graceful {
		c.mu.Unlock()
		sc.Abort()
		return false
	}
	if c.conns == nil {
		c.conns = map[*shm.ServerConn]bool{}
	}
	c.conns[sc] = true
	draining := c.stopped
	c.mu.Unlock()
	if draining {
		sc.GoAway()
	}
	return true
}

func (c *shmConns) remove(sc *shm.ServerConn) {
	c.mu.Lock()
	delete(c.conns, sc)
	c.mu.Unlock()
}

// wait waits until every connection reserved has ended, once stop was
// called.
func (c *shmConns) wait() { c.open.Wait() }

// stop tells every connection that no new call is taken (graceful), or
// closes them all; connections accepted later are closed at once.
func (c *shmConns) stop(graceful bool) {
	c.mu.Lock()
	// A Stop after a GracefulStop makes the stop a hard one: a connection
	// accepted from then on is closed, not drained.
	c.graceful = graceful && (!c.stopped || c.graceful)
	c.stopped = true
	conns := make([]*shm.ServerConn, 0, len(c.conns))
	for sc := range c.conns {
		conns = append(conns, sc)
	}
	c.mu.Unlock()
	for _, sc := range conns {
		if graceful {
			sc.GoAway()
		} else {
			sc.Abort()
		}
	}
}

// shmRoute routes a connection's calls to a server's shm: address
// through a channel of its own whose every method forwards to the
// connection (see inprocconn.Forward): the channel gives the calls
// grpc-go's client semantics, the connection carries them encoded. It
// connects when a call needs it, and again once a connection ended, as
// grpc-go's client does.
type shmRoute struct {
	addr   Address
	spin   int
	conn   *callConn
	dialMu sync.Mutex // one dial at a time
	cur    atomic.Pointer[shmLink]
}

// shmLink is one connection to the server, and the channel bound to it.
type shmLink struct {
	cl     *shm.Client
	ch     *inproc.Channel
	peer   *peer.Peer
	closed context.Context // the callConn's
	cc     grpc.ClientConnInterface
}

// newShmConn is a connection to the shm: address a.
func newShmConn(a Address, cfg clientConfig) (ClientConn, error) {
	switch {
	case cfg.creds != nil:
		return nil, addressError(a.String(), "the shm: framing carries no transport credentials; it never leaves the machine")
	case len(cfg.grpc) > 0:
		return nil, addressError(a.String(), "a shm: connection is not grpc-go's: it takes no options of WithGRPCDialOptions")
	}
	r := &shmRoute{addr: a, spin: cfg.shmSpin}
	c := newCallConn(cfg, r)
	r.conn = c
	return c, nil
}

// alive says whether calls can begin on l: not once its connection
// failed, though its reader has yet to finish, which at one processor
// may wait for a caller that never yields.
func (l *shmLink) alive() bool {
	select {
	case <-l.cl.Failed():
		return false
	default:
		return !l.cl.Away() // the server drains it: new calls connect anew
	}
}

func (l *shmLink) rebind(hs []stats.Handler) grpc.ClientConnInterface {
	return shmCalls{l.cl, inprocconn.Bind(l.ch, inprocconn.Conn{Stats: hs, Closed: l.closed, Peer: l.peer, Encode: true, InlineUnary: true})}
}

// shmCalls counts each call in on its link's Client while the channel
// begins it (see shm.Client.Enter): a call that chose the link before
// the server's GoAway came opens on it, as grpc-go serves the streams a
// client created before its GOAWAY arrived.
type shmCalls struct {
	cl *shm.Client
	cc grpc.ClientConnInterface
}

// errShmGoingAway fails a call that chose a link its server drains once
// the link opens no more calls: rare, since such a link is no longer
// chosen.
var errShmGoingAway = status.Error(codes.Unavailable, "localgrpc: the shm: server is going away and takes no new call")

func (c shmCalls) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if !c.cl.Enter() {
		return errShmGoingAway
	}
	defer c.cl.Leave()
	return c.cc.Invoke(ctx, method, args, reply, opts...)
}

func (c shmCalls) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if !c.cl.Enter() {
		return nil, errShmGoingAway
	}
	// The stream opened on the connection before NewStream returned
	// (see shm.Client.Open).
	defer c.cl.Leave()
	return c.cc.NewStream(ctx, desc, method, opts...)
}

func (r *shmRoute) now() grpc.ClientConnInterface {
	if l := r.cur.Load(); l != nil && l.alive() {
		return l.cc
	}
	return nil
}

// ready connects, unless a connection is up: at once, or with wait until
// one succeeds, ctx ends or the connection closes, trying again after a
// growing pause as grpc-go's client does.
func (r *shmRoute) ready(ctx context.Context, wait bool) (destination, error) {
	var backoff time.Duration
	for {
		l, err := r.dial(ctx)
		if err == nil {
			return l, nil
		}
		if !wait {
			return nil, status.Errorf(codes.Unavailable, "localgrpc: connecting to %s: %v", r.addr, err)
		}
		backoff = min(max(2*backoff, 50*time.Millisecond), time.Second)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-r.conn.closed.Done():
			t.Stop()
			return nil, errConnClosing
		}
	}
}

// dial connects to the server, or returns the connection another call
// made meanwhile.
func (r *shmRoute) dial(ctx context.Context) (*shmLink, error) {
	r.dialMu.Lock()
	defer r.dialMu.Unlock()
	if l := r.cur.Load(); l != nil && l.alive() {
		return l, nil
	}
	if r.conn.closed.Err() != nil {
		return nil, errConnClosing
	}
	network, address, _ := r.addr.Socket()
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	info := socketAuthInfo{allowed: true, CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	if cred, err := readPeerCred(nc); err == nil {
		info.cred, info.known = cred, true
	}
	p := &peer.Peer{Addr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr(), AuthInfo: info}
	deadline := time.Now().Add(shmHandshake)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	nc.SetDeadline(deadline)
	cl, err := shm.NewClient(nc, shm.Options{Spin: r.spin})
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	// The channel's own server side is the forward handlers: the server's
	// limits apply at the server, and the client's in its call options.
	ch := inproc.New(inproc.WithServerMaxRecvMsgSize(math.MaxInt32), inproc.WithServerMaxSendMsgSize(math.MaxInt32), inproc.WithWindow(shmForwardWindow), inproc.WithWindowBytes(shmForwardWindowBytes))
	inprocconn.Forward(ch, cl.Unary, cl.Stream, cl.Open)
	// The connection's Close closes the link as grpc-go's closes its
	// transport: the calls end with Canceled here and the socket closes,
	// with no cancel sent per call, so the server's handlers find a closed
	// connection. The link's calls are bound to a context of the link's
	// own, cancelled once the Client stopped sending cancels.
	closed, cancel := context.WithCancelCause(context.Background())
	context.AfterFunc(r.conn.closed, func() {
		cl.Closing()
		cancel(context.Cause(r.conn.closed))
		cl.CloseIdle(shmHandshake)
	})
	l := &shmLink{cl: cl, ch: ch, peer: p, closed: closed}
	l.cc = l.rebind(r.conn.stats)
	r.cur.Store(l)
	return l, nil
}

// The window of a link's channel, between its forward handler and the
// caller: what arrived on a stream waits there once the forward handler
// took it from the connection, whose own window (1 MiB a stream) bounds
// what the server sends ahead. Counted in bytes far more than in
// messages, so that a closed connection still gives its caller every
// small message that had arrived, as grpc-go's transport does, while a
// caller that reads nothing holds little more than the connection's
// window.
const (
	shmForwardWindow      = 1 << 12
	shmForwardWindowBytes = 64 << 10
)
