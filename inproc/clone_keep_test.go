package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
)

// Receivers that keep what they received, in every way a program may, while
// the sender reuses one message and changes it in place, and the copy each
// receiver's message came from goes back for reuse (handover.Release): what
// each receiver holds must stay as it was received, plus its own changes,
// as over grpc-go.

// keepSender sends n messages of one google.rpc.Status, changed in place
// between sends: its nested Any's bytes are written over, its list is cut
// and grown over its own array.
func keepSender(n int, send func(proto.Message) error) error {
	st := &rpcstatus.Status{Details: []*anypb.Any{{Value: make([]byte, 4)}}}
	for i := range n {
		st.Code = int32(i)
		st.Message = fmt.Sprint("m", i)
		st.Details[0].TypeUrl = fmt.Sprint("t", i)
		for j := range st.Details[0].Value {
			st.Details[0].Value[j] = byte(i + j)
		}
		st.Details = st.Details[:1]
		if i%3 == 0 {
			st.Details = append(st.Details, &anypb.Any{TypeUrl: "extra", Value: []byte{byte(i)}})
		}
		if err := send(st); err != nil {
			return err
		}
	}
	return nil
}

// kept is what a receiver keeps of one message: the message, its list,
// its first nested message, a part of that one's bytes.
type kept struct {
	m    proto.Message
	list []*anypb.Any
	any0 *anypb.Any
	part []byte
}

// keepReceive receives into a message of the generated type, or every
// fifth time into a dynamic one of the same descriptor, keeps parts of it
// and changes every other one.
func keepReceive(i int, recv func(any) error) (kept, error) {
	if i%5 == 4 {
		d := dynamicpb.NewMessage((&rpcstatus.Status{}).ProtoReflect().Descriptor())
		if err := recv(d); err != nil {
			return kept{}, err
		}
		return kept{m: d}, nil
	}
	r := &rpcstatus.Status{}
	if err := recv(r); err != nil {
		return kept{}, err
	}
	if len(r.Details) == 0 || len(r.Details[0].Value) < 3 {
		return kept{}, fmt.Errorf("message %d arrived as %v", i, r)
	}
	k := kept{m: r, list: r.Details, any0: r.Details[0], part: r.Details[0].Value[1:3]}
	if i%2 == 0 {
		r.Details[0].Value[0] ^= 0xff
		r.Details = append(r.Details, &anypb.Any{TypeUrl: "mine"})
		r.Message += "!"
		k.part[1] = 0xee
	}
	return k, nil
}

// dumpKept describes what a receiver holds.
func dumpKept(ks []kept) string {
	var b strings.Builder
	for i, k := range ks {
		fmt.Fprintf(&b, "%d: %s", i, wireOf(k.m))
		if k.any0 != nil {
			fmt.Fprintf(&b, " list %d any0 %q %x part %x", len(k.list), k.any0.TypeUrl, k.any0.Value, k.part)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// keepBidi is a handler that keeps every request and answers each with
// a message of its own reused, then tells done what it keeps.
func keepBidi(n int, done chan<- string) func(grpc.ServerStream) error {
	return func(ss grpc.ServerStream) error {
		var ks []kept
		i := 0
		err := keepSender(n, func(m proto.Message) error {
			k, err := keepReceive(i, ss.RecvMsg)
			if err != nil {
				return err
			}
			i++
			ks = append(ks, k)
			return ss.SendMsg(m)
		})
		done <- dumpKept(ks)
		return err
	}
}

// keepClient runs streams concurrent bidi streams of n messages each on
// cc, and unary calls between, and returns what every receiver holds at
// the end.
func keepClient(t *testing.T, cc grpc.ClientConnInterface, n, streams int, done chan string) string {
	var wg sync.WaitGroup
	out := make([]string, streams)
	unary := make([]string, streams)
	for s := range streams {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*waitLimit)
			defer cancel()
			cs, err := cc.NewStream(ctx, anyBidiDesc, anyBidi)
			if err != nil {
				out[s] = err.Error()
				return
			}
			var ks []kept
			var calls []kept
			i := 0
			err = keepSender(n, func(m proto.Message) error {
				if err := cs.SendMsg(m); err != nil {
					return err
				}
				k, err := keepReceive(i, cs.RecvMsg)
				if err != nil {
					return err
				}
				i++
				ks = append(ks, k)
				if i%7 == 0 { // a unary call of the same type: its request takes a spare copy
					c, err := keepReceive(i, func(reply any) error {
						return cc.Invoke(ctx, anyUnary, m, reply)
					})
					if err != nil {
						return err
					}
					calls = append(calls, c)
				}
				return nil
			})
			if err == nil {
				err = cs.CloseSend()
			}
			if err == nil {
				if err = cs.RecvMsg(&rpcstatus.Status{}); errors.Is(err, io.EOF) {
					err = nil
				}
			}
			out[s] = fmt.Sprintf("client err=%v\n%s", err, dumpKept(ks))
			unary[s] = dumpKept(calls)
		})
	}
	wg.Wait()
	var handlers []string
	for range streams {
		handlers = append(handlers, receive(t, done, "a handler's dump"))
	}
	// The handlers' dumps are alike: every stream sends the same.
	return strings.Join(out, "\n") + "\nunary:\n" + strings.Join(unary, "\n") + "\nhandlers:\n" + strings.Join(handlers, "\n")
}

func keepSvc(n int, done chan string, handlerKept *[]kept, mu *sync.Mutex) *anySvc {
	return &anySvc{
		newReq: func() proto.Message { return &rpcstatus.Status{} },
		resp: func(req proto.Message) (proto.Message, error) {
			mu.Lock()
			*handlerKept = append(*handlerKept, kept{m: req})
			mu.Unlock()
			return req, nil
		},
		bidi: keepBidi(n, done),
	}
}

// TestCloneReceiversKeepWhatTheyGot compares what every receiver holds
// at the end with grpc-go's over bufconn, in every mode, with several
// streams of the same method and type at once.
func TestCloneReceiversKeepWhatTheyGot(t *testing.T) {
	const n, streams = 60, 4
	run := func(cc func(*anySvc) grpc.ClientConnInterface) string {
		done := make(chan string, streams)
		var mu sync.Mutex
		var unaryKept []kept
		got := keepClient(t, cc(keepSvc(n, done, &unaryKept, &mu)), n, streams, done)
		mu.Lock()
		defer mu.Unlock()
		// The unary handler's requests, in no set order: only their count
		// and that each is one the client sent.
		bad := 0
		for _, k := range unaryKept {
			st := k.m.(*rpcstatus.Status)
			if want := fmt.Sprint("m", st.Code); st.Message != want || st.Details[0].TypeUrl != fmt.Sprint("t", st.Code) || st.Details[0].Value[0] != byte(st.Code) {
				bad++
			}
		}
		return got + fmt.Sprintf("\nunary handler kept %d, %d changed", len(unaryKept), bad)
	}
	want := run(func(s *anySvc) grpc.ClientConnInterface { return anyReference(t, s) })
	forEachMode(t, func(t *testing.T, m testMode) {
		if isShare(t, m) {
			t.Skip("with Share the sender must not change what it sent")
		}
		got := run(func(s *anySvc) grpc.ClientConnInterface {
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, s)
			return ch
		})
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("line %d differs:\ninproc:  %s\ngrpc-go: %s", i, gl[i], wl[i])
				}
			}
			t.Fatalf("inproc %d lines, grpc-go %d", len(gl), len(wl))
		}
	})
}
