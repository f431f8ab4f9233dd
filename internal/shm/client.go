package shm

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
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
	away   bool // the server said it takes no new call
}

// NewClient speaks the framing's hello on nc and starts reading its
// frames. The Client owns nc from then on.
func NewClient(nc net.Conn) (*Client, error) {
	peer, err := handshake(nc, true)
	if err != nil {
		nc.Close()
		return nil, err
	}
	cl := &Client{c: newConn(nc, peer), nextID: 1}
	go cl.read()
	go cl.c.writeCtrl()
	return cl, nil
}

// Close closes the connection: calls in flight end with Unavailable.
func (cl *Client) Close() error {
	cl.c.fail(net.ErrClosed)
	<-cl.c.done
	return nil
}

// Done is closed once the connection ended.
func (cl *Client) Done() <-chan struct{} { return cl.c.done }

// Err is why the connection ended, once Done is closed.
func (cl *Client) Err() error {
	cl.c.mu.Lock()
	defer cl.c.mu.Unlock()
	return cl.c.err
}

// open begins a stream.
func (cl *Client) open() (*stream, error) {
	c := cl.c
	cl.mu.Lock()
	id := cl.nextID
	cl.nextID += 2
	away := cl.away || id < 1 // an id that wrapped around
	cl.mu.Unlock()
	s := newStream(c, id, 1<<31-1) // the call's own limit is checked by the channel
	c.mu.Lock()
	err := c.err
	if err == nil && !away {
		c.streams[id] = s
	}
	c.mu.Unlock()
	switch {
	case err != nil:
		return nil, status.Error(codes.Unavailable, connClosedMessage(err))
	case away:
		return nil, status.Error(codes.Unavailable, "shm: the server is going away and takes no new call")
	}
	return s, nil
}

// Unary is the forward handler of unary calls: one message each way.
func (cl *Client) Unary(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var req inprocconn.Encoded
	if err := dec(&req); err != nil {
		return nil, err
	}
	method, _ := grpc.Method(ctx)
	s, err := cl.open()
	if err != nil {
		req.Data.Free()
		return nil, err
	}
	defer s.end()
	head := shmwire.AppendFrame(nil, s.id, shmwire.Headers, 0, requestOf(ctx, method, true).Append(nil))
	end := shmwire.AppendFrame(nil, s.id, shmwire.Message, shmwire.End, nil)
	err = s.send(ctx, head, bytesOf(req.Data), end)
	req.Data.Free()
	if err != nil {
		return nil, cl.left(ctx, s, err)
	}
	var resp []byte
	for {
		e, err := s.next(ctx)
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
			resp = e.data
			if resp == nil {
				resp = []byte{}
			}
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
			return &inprocconn.Encoded{Data: encoded(resp)}, nil
		case evReset:
			return nil, e.st.Err()
		}
	}
}

// Stream is the forward handler of streaming calls. The client's messages
// go out from a goroutine of the call's, which ends with it.
func (cl *Client) Stream(_ any, ss grpc.ServerStream) error {
	ctx := ss.Context()
	method, _ := grpc.MethodFromServerStream(ss)
	s, err := cl.open()
	if err != nil {
		return err
	}
	defer s.end()
	if err := cl.c.write(shmwire.AppendFrame(nil, s.id, shmwire.Headers, 0, requestOf(ctx, method, false).Append(nil))); err != nil {
		return status.Error(codes.Unavailable, connClosedMessage(err))
	}
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
			if err := ss.SendMsg(&inprocconn.Encoded{Data: encoded(e.data)}); err != nil {
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
	select {
	case <-s.over:
		return // the server ended it first
	default:
	}
	cl.c.queueCtrl(shmwire.AppendFrame(nil, s.id, shmwire.Cancel, 0, shmwire.AppendCode(nil, code)))
}

// read reads the server's frames until the connection ends.
func (cl *Client) read() {
	c := cl.c
	defer close(c.done)
	for {
		h, p, err := c.r.ReadFrame()
		if err == nil {
			err = cl.onFrame(h, p)
		}
		if err != nil {
			c.fail(err)
			return
		}
	}
}

func (cl *Client) onFrame(h shmwire.Header, p []byte) error {
	c := cl.c
	if done, err := c.onFrame(h, p); done || err != nil {
		return err
	}
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
		cl.mu.Lock()
		cl.away = true
		cl.mu.Unlock()
	}
	return nil
}

// requestOf is the Headers payload of a call of method from the forward
// handler's ctx: the caller's metadata, deadline and content subtype.
// What the channel added for its own handler (the :authority, the
// content-type, the user-agent) is left to the server's channel to add.
func requestOf(ctx context.Context, method string, unary bool) *shmwire.Request {
	r := &shmwire.Request{Method: method, Unary: unary}
	if d, ok := ctx.Deadline(); ok {
		r.Timeout = max(time.Until(d), 1)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for k, v := range md {
		switch k {
		case ":authority", "user-agent":
			continue
		case "content-type":
			if len(v) > 0 {
				sub, _ := strings.CutPrefix(v[0], "application/grpc")
				r.Subtype, _ = strings.CutPrefix(sub, "+")
			}
			continue
		}
		if r.MD == nil {
			r.MD = make(metadata.MD, len(md))
		}
		r.MD[k] = v
	}
	return r
}

// bytesOf is the bytes of an encoded message, copied only if they are in
// pieces.
func bytesOf(d mem.BufferSlice) []byte {
	if len(d) == 1 {
		return d[0].ReadOnlyData()
	}
	return d.Materialize()
}
