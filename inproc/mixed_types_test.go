package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// mixedKinds are the Go types of one wire shape (field 1, a string, or
// a list of strings whose last element wins) that the tests send and
// receive in turn on one method, so that the plans kept per method and
// direction switch under the feet of every sender and receiver.
const mixedKinds = 5

// newMixed makes a message of kind k holding text in field 1.
func newMixed(k int, text string) proto.Message {
	switch k % mixedKinds {
	case 0:
		return &echov1.EchoRequest{Text: text}
	case 1:
		d := dynamicpb.NewMessage((&echov1.EchoRequest{}).ProtoReflect().Descriptor())
		d.Set(d.Descriptor().Fields().ByNumber(1), protoreflect.ValueOfString(text))
		return d
	case 2:
		return wrapperspb.String(text)
	case 3:
		return &listv1.ListResponse{Strings: []string{text}}
	}
	return &echov1.EchoResponse{Text: text}
}

// mixedText reads field 1 of m as newMixed wrote it.
func mixedText(m proto.Message) string {
	rm := m.ProtoReflect()
	fd := rm.Descriptor().Fields().ByNumber(1)
	if fd.IsList() {
		l := rm.Get(fd).List()
		if l.Len() == 0 {
			return ""
		}
		return l.Get(l.Len() - 1).String()
	}
	return rm.Get(fd).String()
}

// scribbleMixed changes m in place, as a sender reusing its message
// right after Send may with Clone.
func scribbleMixed(m proto.Message) {
	if l, ok := m.(*listv1.ListResponse); ok && len(l.Strings) > 0 {
		l.Strings[0] = "scribbled"
		return
	}
	rm := m.ProtoReflect()
	rm.Set(rm.Descriptor().Fields().ByNumber(1), protoreflect.ValueOfString("scribbled"))
}

// TestUnaryMixedTypes: 8 goroutines call one unary method at once,
// each call sending one of five Go types of one wire shape (generated
// EchoRequest, dynamic EchoRequest, StringValue, ListResponse,
// EchoResponse), the handler receiving into another chosen per call and
// answering in a third, and the client receiving into a fourth; a
// twelfth of the answers is one cached object the handler returns to
// everybody. Every caller must get back what it sent, whatever the
// others send meanwhile; the cached answer must not change.
func TestUnaryMixedTypes(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		cached := &echov1.EchoResponse{Text: "cached"}
		var seq atomic.Int64
		svc := &anySvc{
			newReq: func() proto.Message { return newMixed(int(seq.Add(1)), "") },
		}
		svc.resp = func(req proto.Message) (proto.Message, error) {
			text := mixedText(req)
			if strings.HasSuffix(text, "/c") {
				return cached, nil
			}
			return newMixed(int(seq.Add(1)), "re:"+text), nil
		}
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				for i := range 150 {
					text := fmt.Sprintf("g%d-%d", g, i)
					want := "re:" + text
					if i%12 == 5 {
						text += "/c"
						want = "cached"
					}
					req := newMixed(g+i, text)
					reply := newMixed(g+2*i+1, "old")
					if err := catch(func() error { return ch.Invoke(context.Background(), anyUnary, req, reply) }); err != nil {
						errs <- fmt.Errorf("%T → %T: %v", req, reply, err)
						return
					}
					if got := mixedText(reply); got != want {
						errs <- fmt.Errorf("%T → %T: reply %q, want %q", req, reply, got, want)
						return
					}
					if got := mixedText(req); got != text {
						errs <- fmt.Errorf("%T: the request became %q", req, got)
						return
					}
					if !isShare(t, m) {
						scribbleMixed(reply)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if cached.Text != "cached" {
			t.Errorf("the cached response became %q", cached.Text)
		}
	})
}

// TestStreamsMixedTypes: 6 bidi streams of one method run at once;
// on each, the client sends one Go type and receives into another, the
// handler receives into a third and answers in a fourth, all different
// across streams, so that the plans kept for the method switch between
// any two messages of one stream. With Clone both sides scribble over
// what they sent right after Send. Every stream must see its own
// messages, in order.
func TestStreamsMixedTypes(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		var streamNo atomic.Int64
		clone := !isShare(t, m)
		svc := &anySvc{bidi: func(ss grpc.ServerStream) error {
			k := int(streamNo.Add(1))
			for {
				in := newMixed(k+2, "stale")
				err := ss.RecvMsg(in)
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				out := newMixed(k+3, "re:"+mixedText(in))
				if err := ss.SendMsg(out); err != nil {
					return err
				}
				if clone {
					scribbleMixed(out)
				}
			}
		}}
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc)
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for g := range 6 {
			wg.Go(func() {
				errs <- catch(func() error {
					s, err := ch.NewStream(context.Background(), anyBidiDesc, anyBidi)
					if err != nil {
						return err
					}
					for i := range 200 {
						text := fmt.Sprintf("s%d-%d", g, i)
						req := newMixed(g+i%2, text)
						if err := s.SendMsg(req); err != nil {
							return fmt.Errorf("send %d: %v", i, err)
						}
						if clone {
							scribbleMixed(req)
						}
						reply := newMixed(g+1+i%3, "old")
						if err := s.RecvMsg(reply); err != nil {
							return fmt.Errorf("recv %d: %v", i, err)
						}
						if got := mixedText(reply); got != "re:"+text {
							return fmt.Errorf("stream %d message %d: %T → %T got %q, want %q", g, i, req, reply, got, "re:"+text)
						}
					}
					if err := s.CloseSend(); err != nil {
						return err
					}
					if err := s.RecvMsg(&echov1.EchoResponse{}); err != io.EOF {
						return fmt.Errorf("end: %v", err)
					}
					return nil
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// TestLimitsAtEdgeMixedTypes: messages of exactly the server's
// receive limit and of one byte more, of four Go types in turn, from 4
// goroutines at once: the sizes the kept plans give must be each
// message's own, so that exactly the ones over the limit are refused,
// with ResourceExhausted, whatever type another caller sent meanwhile.
func TestLimitsAtEdgeMixedTypes(t *testing.T) {
	const limit = 64 << 10
	// A field 1 string of n bytes encodes in 1 + 3 + n bytes for these n.
	fit := strings.Repeat("a", limit-4)
	over := fit + "b"
	forEachMode(t, func(t *testing.T, m testMode) {
		var sizes sync.Map
		ch := newChannel(t, m, inproc.WithServerMaxRecvMsgSize(limit))
		ch.RegisterService(anyDesc, &anySvc{
			newReq: func() proto.Message { return &wrapperspb.BytesValue{} },
			resp: func(req proto.Message) (proto.Message, error) {
				n := len(req.(*wrapperspb.BytesValue).Value)
				sizes.Store(n, true)
				return wrapperspb.Int64(int64(n)), nil
			},
		})
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := range 4 {
			wg.Go(func() {
				for i := range 40 {
					text := fit
					if (g+i)%2 == 1 {
						text = over
					}
					req := newMixed(g+i, text)
					if proto.Size(req) != len(text)+4 {
						errs <- fmt.Errorf("test error: %T of %d bytes", req, proto.Size(req))
						return
					}
					reply := &wrapperspb.Int64Value{}
					err := catch(func() error { return ch.Invoke(context.Background(), anyUnary, req, reply) })
					switch {
					case text == over && status.Code(err) != codes.ResourceExhausted:
						errs <- fmt.Errorf("%T of %d bytes over a limit of %d: %v, want ResourceExhausted", req, proto.Size(req), limit, err)
						return
					case text == fit && (err != nil || reply.Value != int64(len(fit))):
						errs <- fmt.Errorf("%T of %d bytes at a limit of %d: reply %d, %v", req, proto.Size(req), limit, reply.Value, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
