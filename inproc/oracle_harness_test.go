package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// oracleCase is a message to send and what the receivers allocate; a
// nil recv means a new message of the sent one's type.
type oracleCase struct {
	name string
	msg  func() proto.Message
	recv func() proto.Message
}

func (c oracleCase) newRecv() proto.Message {
	if c.recv != nil {
		return c.recv()
	}
	return c.msg().ProtoReflect().New().Interface()
}

// oracleSvc echoes on both methods: the unary one answers with its
// request, the bidi one sends back every message it receives. It tells
// the test what the handler saw on saw.
func oracleSvc(c oracleCase, saw chan<- string) *anySvc {
	return &anySvc{
		newReq: c.newRecv,
		resp: func(req proto.Message) (proto.Message, error) {
			saw <- wireOf(req)
			return req, nil
		},
		bidi: func(ss grpc.ServerStream) error {
			defer func() { saw <- handlerEnded }()
			for {
				in := c.newRecv()
				if err := ss.RecvMsg(in); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					if status.Code(err) != codes.Canceled { // a client that failed its own send cancels, sooner or later
						saw <- "recv " + status.Code(err).String()
					}
					return err
				}
				saw <- wireOf(in)
				if err := ss.SendMsg(in); err != nil {
					return err // not told: with Inline, SendMsg learns of the client's failure
				}
			}
		},
	}
}

// handlerEnded is what the bidi handler tells last, so that the test
// reads all it told: a client may see its stream end before the handler
// returns (grpc-go's server, like inproc, sends the status of a failed
// RecvMsg at once). Markers begin with a NUL, which no record does.
const handlerEnded = "\x00ended"

// unaryBegan and unaryEnded are what a unary handler tells first and
// last, for the same reason (see oracleUnaryTold).
const (
	unaryBegan = "\x00unary began"
	unaryEnded = "\x00unary ended"
)

func isMarker(s string) bool { return strings.HasPrefix(s, "\x00") }

// oracleUntilEnded returns what the bidi handler told until it ended.
func oracleUntilEnded(saw chan string) string {
	var out []string
	for {
		select {
		case s := <-saw:
			if s == handlerEnded {
				return strings.Join(out, ", ")
			}
			if !isMarker(s) {
				out = append(out, s)
			}
		case <-time.After(waitLimit):
			return strings.Join(append(out, "the handler did not end"), ", ")
		}
	}
}

// oracleUnaryTold returns what the unary handler told, once its client's
// call returned: nothing if it has not begun (its client failed its own
// send, say), else all it told until it ended.
func oracleUnaryTold(saw chan string) string {
	var out []string
	for running := false; ; {
		var s string
		if running {
			select {
			case s = <-saw:
			case <-time.After(waitLimit):
				return strings.Join(append(out, "the handler did not end"), ", ")
			}
		} else {
			select {
			case s = <-saw:
			default:
				return strings.Join(out, ", ")
			}
		}
		switch {
		case s == unaryBegan:
			running = true
		case s == unaryEnded:
			running = false
		case !isMarker(s):
			out = append(out, s)
		}
	}
}

// oracleDrain returns what the handlers told so far, but whether a bidi
// handler whose client failed its own send has ended yet.
func oracleDrain(saw chan string) string {
	var out []string
	for {
		select {
		case s := <-saw:
			if !isMarker(s) {
				out = append(out, s)
			}
		default:
			return strings.Join(out, ", ")
		}
	}
}

// oracleRun sends c's message through the unary method and, twice, the
// bidi one, and describes what the handler and the client saw, and what
// became of the client's message.
func oracleRun(cc grpc.ClientConnInterface, c oracleCase, saw chan string) string {
	var b strings.Builder
	msg := c.msg()
	before := wireOf(msg)
	reply := c.newRecv()
	err := catch(func() error { return cc.Invoke(context.Background(), anyUnary, msg, reply) })
	fmt.Fprintf(&b, "unary: handler [%s] client ", oracleDrain(saw))
	if err != nil {
		fmt.Fprintf(&b, "code=%v", status.Code(err))
		if strings.HasPrefix(err.Error(), "PANIC") {
			b.WriteString(" " + err.Error())
		}
	} else {
		b.WriteString(wireOf(reply))
	}
	streamed := false
	err = catch(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		s, err := cc.NewStream(ctx, anyBidiDesc, anyBidi)
		if err != nil {
			return err
		}
		for range 2 {
			if err := s.SendMsg(msg); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return err
			}
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		// The handler gets the messages now, and tells what it saw
		// before it ends; the client may see the stream end first.
		streamed = true
		b.WriteString(" | stream: client")
		for {
			in := c.newRecv()
			if err := s.RecvMsg(in); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			b.WriteString(" " + wireOf(in))
		}
	})
	if err != nil {
		fmt.Fprintf(&b, " code=%v", status.Code(err))
		if strings.HasPrefix(err.Error(), "PANIC") {
			b.WriteString(" " + err.Error())
		}
	}
	var told string
	if streamed {
		told = oracleUntilEnded(saw)
	} else {
		told = oracleDrain(saw)
	}
	fmt.Fprintf(&b, " handler [%s]", told)
	if after := wireOf(msg); after != before {
		fmt.Fprintf(&b, " | client's message changed to %s", after)
	}
	return b.String()
}

// oracleNoStats is a stats.Handler that does nothing: with one, a unary
// handler's response is handed over on the handler's side (Send, then
// Receive) instead of by the client's Transfer.
type oracleNoStats struct{}

func (oracleNoStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (oracleNoStats) HandleRPC(context.Context, stats.RPCStats)                         {}
func (oracleNoStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (oracleNoStats) HandleConn(context.Context, stats.ConnStats)                       {}

// oracleAgree runs every case over grpc-go and in every mode and
// reports where inproc differs; extra options go to every Channel.
func oracleAgree(t *testing.T, cases []oracleCase, extra ...inproc.Option) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			saw := make(chan string, 16)
			want := oracleRun(anyReference(t, oracleSvc(c, saw)), c, saw)
			forEachMode(t, func(t *testing.T, m testMode) {
				saw := make(chan string, 16)
				ch := newChannel(t, m, extra...)
				ch.RegisterService(anyDesc, oracleSvc(c, saw))
				if got := oracleRun(ch, c, saw); got != want {
					t.Errorf("\ninproc:  %.600s\ngrpc-go: %.600s", got, want)
				}
			})
		})
	}
}
