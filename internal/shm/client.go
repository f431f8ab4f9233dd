package shm

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Client is the client side of one connection. Its Unary and Stream are
// the handlers a client's channel forwards every call to (see
// inprocconn.Forward): they carry the call's encoded messages and
// metadata to the server and its header, messages, trailer and status
// back.
type Client struct {
	c *conn

	mu     sync.Mutex
	nextID uint32
	// away: the server said it takes no new call. pending counts the
	// calls that chose the connection (see Enter) and are not done;
	// answered says the client answered the server's GoAway, which it
	// does once away and no call is pending: no call opens from then on.
	away     atomic.Bool
	pending  int
	answered bool
	closing  bool // the connection is closing: calls that end send no cancel
	// closingCh is closed with closing set: a unary call waiting on its
	// caller's context (see Unary) stops waiting.
	closingCh chan struct{}
}

// NewClient speaks the framing's hello on nc and starts reading its
// frames. The Client owns nc from then on.
func NewClient(nc net.Conn, o Options) (*Client, error) {
	c, err := setup(nc, true, o)
	if err != nil {
		nc.Close()
		return nil, err
	}
	cl := &Client{c: c, nextID: 1, closingCh: make(chan struct{})}
	c.pumpOn = cl.onFrame
	c.aside = cl.aside
	go c.readFrames(cl.onFrame)
	go c.writeCtrl()
	return cl, nil
}

// Closing says the connection is about to close: the calls that end from
// now on send the server no cancel, which the socket's close says for
// them all.
func (cl *Client) Closing() {
	cl.mu.Lock()
	if !cl.closing {
		cl.closing = true
		close(cl.closingCh)
		if cl.c.pump != nil {
			cl.c.pump.interrupt() // a caller reading the ring stops
		}
	}
	cl.mu.Unlock()
}

// CloseIdle closes the connection once no call uses it, or after wait:
// the calls, ended by their context, end first with their own status.
func (cl *Client) CloseIdle(wait time.Duration) {
	deadline := time.Now().Add(wait)
	for pause := 10 * time.Microsecond; time.Now().Before(deadline); pause = min(2*pause, 10*time.Millisecond) {
		cl.c.mu.Lock()
		idle := len(cl.c.streams) == 0 || cl.c.err != nil
		cl.c.mu.Unlock()
		if idle {
			break
		}
		time.Sleep(pause)
	}
	cl.Close()
}

// Close closes the connection: calls in flight end with Unavailable.
func (cl *Client) Close() error {
	cl.c.fail(net.ErrClosed)
	<-cl.c.done
	return nil
}

// Done is closed once the connection ended.
func (cl *Client) Done() <-chan struct{} { return cl.c.done }

// Failed is closed as the connection fails, before Done: no call begins
// on it from then on, though its reader may still be finishing.
func (cl *Client) Failed() <-chan struct{} { return cl.c.failed }

// Err is why the connection ended, once Done is closed.
func (cl *Client) Err() error {
	cl.c.mu.Lock()
	defer cl.c.mu.Unlock()
	return cl.c.err
}

// open begins a stream with the Headers frame of r, and with msg, the
// client's only message, when it fits in a frame (sent reports it). The
// stream's id is taken as its first frame is written, so that the server
// sees ids rise, as HTTP/2's rule is.
func (cl *Client) open(s *stream, r *shmwire.Request, msg []byte, only bool) (sent bool, err error) {
	c := cl.c
	c.pumpReady()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	cl.mu.Lock()
	id := cl.nextID
	cl.nextID += 2
	away := cl.answered || id < 1 // an id that wrapped around
	cl.mu.Unlock()
	s.id = id
	c.mu.Lock()
	err = c.err
	if err == nil && !away {
		c.streams[id] = s
	}
	c.mu.Unlock()
	switch {
	case err != nil:
		return false, status.Error(codes.Unavailable, connClosedMessage(err))
	case away:
		return false, status.Error(codes.Unavailable, "shm: the server is going away and takes no new call")
	}
	b := appendHeaders(c.wbuf[:0], id, r)
	// A large message goes out from where it is (see send), not copied
	// behind the headers.
	if only && len(msg) < largeWrite && len(msg) <= c.frameMax && int64(len(msg)) <= s.sendWin {
		s.sendWin -= int64(len(msg))
		b = shmwire.AppendFrame(b, id, shmwire.Message, 0, msg)
		b = shmwire.AppendFrame(b, id, shmwire.Message, shmwire.End, nil)
		sent = true
	}
	err = c.writeLocked(b)
	c.wbuf = b[:0]
	if cap(c.wbuf) > 1<<20 {
		c.wbuf = nil
	}
	if err != nil {
		s.end()
		return false, status.Error(codes.Unavailable, connClosedMessage(err))
	}
	return sent, nil
}

// newCallStream is a stream for a call about to open; the call's own
// receive limit is the channel's to check.
func (cl *Client) newCallStream() *stream { return newStream(cl.c, 0, 1<<31-1) }

// Unary is the forward handler of unary calls: one message each way.
func (cl *Client) Unary(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	// The request, and the response below, are the stream's: one
	// allocation for all three.
	s := cl.newCallStream()
	req := &s.out
	if err := dec(req); err != nil {
		cl.lost(ctx, s)
		return nil, err
	}
	method, _ := grpc.Method(ctx)
	r := requestOf(ctx, method, true)
	msg := bytesOf(req.Data)
	sent, err := cl.open(s, &r, msg, true)
	if err == nil && !sent {
		var end [shmwire.HeaderLen]byte
		err = s.send(ctx, nil, msg, shmwire.AppendFrame(end[:0], s.id, shmwire.Message, shmwire.End, nil))
		switch {
		case err == errStreamOver:
			// The server ended the call while the request went out (it
			// refused its size, say): its status is among the events.
			err = nil
		case err != nil:
			err = cl.left(ctx, s, err)
		}
	}
	req.Data.Free()
	if err != nil {
		return nil, err
	}
	defer s.end()
	// A handler that runs on its caller's goroutine waits on the caller's
	// context itself, whose Done costs nothing, rather than on the
	// handler's, whose Done the channel makes on demand; the connection's
	// close ends the wait too.
	wait := ctx
	if f := inprocconn.Follows(ctx); f != nil {
		wait = f
	}
	var resp mem.Buffer
	for {
		e, err := s.nextUntil(wait, cl.closingCh)
		if err != nil {
			return nil, cl.left(ctx, s, err)
		}
		switch e.kind {
		case evHeader:
			if err := grpc.SetHeader(ctx, e.md); err != nil {
				return nil, cl.left(ctx, s, err)
			}
		case evMessage:
			if resp != nil {
				cl.cancel(s, codes.Internal)
				return nil, status.Error(codes.Internal, "shm: the server sent a unary call two responses")
			}
			resp = e.msg
		case evTrailers:
			if len(e.md) > 0 {
				grpc.SetTrailer(ctx, e.md)
			}
			if e.st.Code() != codes.OK {
				return nil, e.st.Err()
			}
			if resp == nil {
				return nil, status.Error(codes.Internal, "shm: the server ended a unary call with no response")
			}
			s.outData[0] = resp
			s.out.Data = s.outData[:]
			return &s.out, nil
		case evReset:
			return nil, e.st.Err()
		}
	}
}

// lost opens the call of a unary request its client refused to send
// (see inproc's requestLost) and resets it at once, as grpc-go's client
// sends the header before it encodes the request: the server begins the
// call, and its handler fails to receive the request.
func (cl *Client) lost(ctx context.Context, s *stream) {
	if cl.openBare(ctx, s, true) == nil {
		// Written here, not queued: the client may close the connection
		// as soon as the call returns, and the server must read the
		// reset before the close.
		cl.c.write(shmwire.AppendFrame(nil, s.id, shmwire.Cancel, 0, shmwire.AppendCode(nil, codes.Canceled)))
		s.end()
	}
}

// opened is a stream Open opened, or why it did not.
type opened struct {
	s   *stream
	err error
}

// Open is the forwarding channel's OpenFunc (see inprocconn.Forward): it
// opens a streaming call on the wire before the client's NewStream
// returns, as grpc-go's client sends the header first, so that the
// server hears of the call however soon the client ends it.
func (cl *Client) Open(ctx context.Context) any {
	s := cl.newCallStream()
	return &opened{s, cl.openBare(ctx, s, false)}
}

// openBare opens s for the call whose handler has ctx with its Headers
// frame alone.
func (cl *Client) openBare(ctx context.Context, s *stream, unary bool) error {
	method, _ := grpc.Method(ctx)
	r := requestOf(ctx, method, unary)
	_, err := cl.open(s, &r, nil, false)
	return err
}

// Stream is the forward handler of streaming calls. The client's messages
// go out from a goroutine of the call's, which ends with it.
func (cl *Client) Stream(_ any, ss grpc.ServerStream) error {
	ctx := ss.Context()
	o, _ := inprocconn.Opened(ctx).(*opened)
	if o == nil {
		o = cl.Open(ctx).(*opened)
	}
	if o.err != nil {
		return o.err
	}
	s := o.s
	defer s.end()
	go cl.sendAll(ctx, s, ss)
	for {
		e, err := s.next(ctx)
		if err != nil {
			return cl.left(ctx, s, err)
		}
		switch e.kind {
		case evHeader:
			if err := ss.SendHeader(e.md); err != nil {
				return cl.left(ctx, s, err)
			}
		case evMessage:
			if err := ss.SendMsg(s.encodedOf(e)); err != nil {
				return cl.left(ctx, s, err)
			}
		case evTrailers:
			if len(e.md) > 0 {
				ss.SetTrailer(e.md)
			}
			return e.st.Err()
		case evReset:
			return e.st.Err()
		}
	}
}

// sendAll sends the client's messages, then its end, until the call or
// the stream ends.
func (cl *Client) sendAll(ctx context.Context, s *stream, ss grpc.ServerStream) {
	for {
		var m inprocconn.Encoded
		err := ss.RecvMsg(&m)
		if err == io.EOF {
			cl.c.write(shmwire.AppendFrame(nil, s.id, shmwire.Message, shmwire.End, nil))
			return
		}
		if err != nil {
			// The caller's side of the call ended (a Send after CloseSend,
			// say), not by the server: the server hears of it, as
			// grpc-go's resets the stream.
			cl.cancel(s, codes.Canceled)
			return
		}
		err = s.send(ctx, nil, bytesOf(m.Data), nil)
		m.Data.Free()
		if err != nil {
			return
		}
	}
}

// left ends a call the client left, or that failed here: the server hears
// of it, and the call ends with err's status.
func (cl *Client) left(ctx context.Context, s *stream, err error) error {
	code := status.Code(err)
	if ctxErr := ctx.Err(); ctxErr != nil {
		st := status.FromContextError(ctxErr)
		code, err = st.Code(), st.Err()
	}
	cl.cancel(s, code)
	return err
}

// cancel tells the server the stream ended here with code.
func (cl *Client) cancel(s *stream, code codes.Code) {
	if s.isOver() {
		return // the server ended it first
	}
	cl.mu.Lock()
	closing := cl.closing
	cl.mu.Unlock()
	if closing {
		return
	}
	cl.c.queueCtrl(shmwire.AppendFrame(nil, s.id, shmwire.Cancel, 0, shmwire.AppendCode(nil, code)))
}

func (cl *Client) onFrame(f frame) error {
	c := cl.c
	if done, err := c.onFrame(f); done || err != nil {
		return err
	}
	h, p := f.h, f.p
	switch h.Type {
	case shmwire.Headers:
		md, err := shmwire.ParseMD(p)
		if err != nil {
			return err
		}
		if s := c.stream(h.Stream); s != nil {
			s.push(event{kind: evHeader, md: md})
		}
	case shmwire.Trailers:
		st, err := shmwire.ParseStatus(p)
		if err != nil {
			return err
		}
		if s := c.stream(h.Stream); s != nil {
			s.push(event{kind: evTrailers, md: st.MD, st: statusOf(st)})
		}
	case shmwire.Cancel:
		code, err := shmwire.ParseCode(p)
		if err != nil {
			return err
		}
		if s := c.stream(h.Stream); s != nil {
			s.reset(status.New(code, "shm: the server reset the stream"))
		}
	case shmwire.GoAway:
		if _, err := shmwire.ParseAway(p); err != nil {
			return err
		}
		cl.goingAway()
	}
	return nil
}

// aside sees the frames the server writes on the socket as they are read,
// before their turn: a GoAway, written so, is answered at once though no
// call reads the ring.
func (cl *Client) aside(f frame) {
	if f.h.Type == shmwire.GoAway && f.h.Stream == 0 {
		if _, err := shmwire.ParseAway(f.p); err == nil {
			cl.goingAway()
		}
	}
}

// goingAway takes note of the server's GoAway: calls that chose the
// connection before still open on it, and the client answers once none
// is pending.
func (cl *Client) goingAway() {
	cl.mu.Lock()
	cl.away.Store(true)
	cl.answerLocked()
	cl.mu.Unlock()
}

// answerLocked answers the server's GoAway once no call is pending; cl.mu
// is held. The answer goes behind the Headers of every call opened (open
// writes them holding wmu, which the control writer takes too): the
// server serves those, then closes.
func (cl *Client) answerLocked() {
	if !cl.away.Load() || cl.answered || cl.pending > 0 {
		return
	}
	cl.answered = true
	cl.c.queueCtrl(shmwire.AppendFrame(nil, 0, shmwire.GoAway, 0, (&shmwire.Away{Last: cl.nextID - 2, Reason: "client draining"}).Append(nil)))
}

// Enter counts in a call that chose the connection, before its channel
// begins it: it opens on the connection even if the server's GoAway
// comes meanwhile, as grpc-go serves the streams a client created before
// its GOAWAY arrived. It returns false once the client answered a
// GoAway: the call must choose another connection.
func (cl *Client) Enter() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.answered {
		return false
	}
	cl.pending++
	return true
}

// Leave counts out a call Enter counted in, once it opened on the
// connection or failed.
func (cl *Client) Leave() {
	cl.mu.Lock()
	cl.pending--
	cl.answerLocked()
	cl.mu.Unlock()
}

// Away says the server said GoAway: new calls choose another connection.
func (cl *Client) Away() bool { return cl.away.Load() }

// requestOf is the Headers payload of a call of method from the forward
// handler's ctx: the caller's metadata, deadline and content subtype.
// What the channel added for its own handler (the :authority, the
// content-type, the user-agent) is left to the server's channel to add.
func requestOf(ctx context.Context, method string, unary bool) shmwire.Request {
	r := shmwire.Request{Method: method, Unary: unary}
	if d, ok := ctx.Deadline(); ok {
		r.Timeout = max(time.Until(d), 1)
	}
	r.MD, r.Subtype = inprocconn.Request(ctx)
	if _, added := r.MD["user-agent"]; added {
		md := make(metadata.MD, len(r.MD))
		for k, v := range r.MD {
			if k != ":authority" && k != "content-type" && k != "user-agent" {
				md[k] = v
			}
		}
		r.MD = md
	}
	return r
}

// appendHeaders appends the Headers frame of r on stream id to b, the
// payload written in place.
func appendHeaders(b []byte, id uint32, r *shmwire.Request) []byte {
	return appendPayloadFrame(b, id, shmwire.Headers, r.Append)
}

// bytesOf is the bytes of an encoded message, copied only if they are in
// pieces.
func bytesOf(d mem.BufferSlice) []byte {
	if len(d) == 1 {
		return d[0].ReadOnlyData()
	}
	return d.Materialize()
}
