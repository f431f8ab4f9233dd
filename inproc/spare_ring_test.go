package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// With Clone a stream's receiver gives back the copy each message came in
// (one kept inline; past 128 given back, a ring of 64), and the sender
// copies its next message into it. These tests send streams of lengths
// around those edges, one message reused and changed in place after each
// Send, with the Go type changing mid-stream (a dynamicpb message of the
// same descriptor now and then, and for a stretch), to receivers that
// keep everything they got, change some of it, and fall behind a window
// now and then: what a receiver holds must be what was sent, with its own
// changes only.

// spareLengths are the stream lengths: around the inline copy, the
// window, and the ring's start.
var spareLengths = []int{1, 63, 64, 65, 129, 200, 1000}

// dynamicAt reports whether the i-th message goes as a dynamic message.
func dynamicAt(i int) bool { return i%13 == 7 || i >= 100 && i < 110 }

// sendMixed sends n messages of tag by send: m reused, but as a dynamic
// message of the same content where dynamicAt says.
func sendMixed(tag string, n int, send func(any) error) error {
	m := &flat3.Flat{}
	for i := range n {
		fillSentFlat(m, tag, i)
		var out proto.Message = m
		if dynamicAt(i) {
			d := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
			b, err := proto.Marshal(m)
			if err == nil {
				err = proto.Unmarshal(b, d)
			}
			if err != nil {
				return err
			}
			out = d
		}
		if err := send(out); err != nil {
			return fmt.Errorf("%s: send %d: %w", tag, i, err)
		}
	}
	return nil
}

// lagging has recv fall a window behind now and then, so that a sender
// runs ahead of it and its copies pile up in the Spare.
func lagging(recv func(any) error) func(proto.Message) error {
	i := 0
	return func(m proto.Message) error {
		if i++; i%100 == 1 {
			time.Sleep(time.Millisecond)
		}
		return recv(m)
	}
}

func TestCloneSpareStreamLengths(t *testing.T) {
	windows := []struct {
		name string
		opts []inproc.Option
	}{{"window=default", nil}, {"window=1", []inproc.Option{inproc.WithWindow(1)}}}
	forEachMode(t, func(t *testing.T, mode testMode) {
		if isShare(t, mode) {
			t.Skip("with Share the sender must not change what it sent")
		}
		for _, w := range windows {
			for _, n := range spareLengths {
				t.Run(w.name+"/n="+strconv.Itoa(n), func(t *testing.T) {
					reports := make(chan string, 1)
					ch := newChannel(t, mode, w.opts...)
					ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
						// Up: the client's n messages, then down: n of ours.
						reports <- receiveAndCheck("up", n, lagging(ss.RecvMsg))
						if err := ss.RecvMsg(&flat3.Flat{}); !errors.Is(err, io.EOF) {
							return fmt.Errorf("after %d: %v", n, err)
						}
						return sendMixed("down", n, ss.SendMsg)
					}})
					s, err := ch.NewStream(timeoutCtx(t), anyBidiDesc, anyBidi)
					if err != nil {
						t.Fatal(err)
					}
					if err := sendMixed("up", n, s.SendMsg); err != nil {
						t.Fatal(err)
					}
					if err := s.CloseSend(); err != nil {
						t.Fatal(err)
					}
					if bad := receiveAndCheck("down", n, lagging(s.RecvMsg)); bad != "" {
						t.Error(bad)
					}
					if err := s.RecvMsg(&flat3.Flat{}); !errors.Is(err, io.EOF) {
						t.Errorf("after the last: %v, want io.EOF", err)
					}
					if bad := receive(t, reports, "the handler's report"); bad != "" {
						t.Error(bad)
					}
				})
			}
		}
	})
}

// TestCloneSpareStreamsAtOnce: many streams of one method at once, each
// of a length around the ring's edges, whose copies go back to the one
// pool of their type as each stream drains: no stream's receiver may
// find in what it kept another stream's message.
func TestCloneSpareStreamsAtOnce(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode testMode) {
		if isShare(t, mode) {
			t.Skip("with Share the sender must not change what it sent")
		}
		ch := newChannel(t, mode)
		ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
			in := &flat3.Flat{}
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			n, _ := strconv.Atoi(in.S)
			return sendMixed("s"+in.S, n, ss.SendMsg)
		}})
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		defer cancel()
		errs := make(chan string, 2*len(spareLengths))
		for round := range 2 {
			for _, n := range spareLengths {
				go func() {
					errs <- func() string {
						s, err := ch.NewStream(ctx, anyBidiDesc, anyBidi)
						if err != nil {
							return err.Error()
						}
						if err := s.SendMsg(&flat3.Flat{S: strconv.Itoa(n)}); err != nil {
							return err.Error()
						}
						if err := s.CloseSend(); err != nil {
							return err.Error()
						}
						recv := func(m proto.Message) error { return s.RecvMsg(m) }
						if round == 1 {
							recv = lagging(s.RecvMsg)
						}
						if bad := receiveAndCheck("s"+strconv.Itoa(n), n, recv); bad != "" {
							return bad
						}
						if err := s.RecvMsg(&flat3.Flat{}); !errors.Is(err, io.EOF) {
							return fmt.Sprintf("n=%d: after the last: %v", n, err)
						}
						return ""
					}()
				}()
			}
		}
		for range 2 * len(spareLengths) {
			if bad := receive(t, errs, "a stream to end"); bad != "" {
				t.Error(bad)
			}
		}
	})
}
