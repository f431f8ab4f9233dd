package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// describeMsg says what a receiver got: the message's full name and its
// field 1, as text.
func describeMsg(m proto.Message) string {
	rm := m.ProtoReflect()
	fd := rm.Descriptor().Fields().ByNumber(1)
	v := ""
	if fd != nil && rm.Has(fd) {
		v = fmt.Sprint(rm.Get(fd).Interface())
		if b, ok := rm.Get(fd).Interface().([]byte); ok {
			v = string(b)
		}
	}
	return fmt.Sprintf("%s{%s}", rm.Descriptor().FullName(), v)
}

// TestDynamicAcrossDescriptors: a sender sends a dynamic
// message of one descriptor (google.protobuf.StringValue) to a receiver
// whose message is a dynamic message of another (localgrpc's EchoRequest
// or EchoResponse), both of Go type *dynamicpb.Message. Over a socket the
// receiver gets a message of its own descriptor whose field 1 holds the
// bytes sent. inproc copies across the two (shallowCopy and
// shallowCopyPlanned compare Go types, not descriptors): the receiver's
// message turns into a StringValue, and a unary client's Clone transfer
// (proto.Merge of one descriptor into the other) panics.
func TestDynamicAcrossDescriptors(t *testing.T) {
	echoMD := (&echov1.EchoRequest{}).ProtoReflect().Descriptor()
	respMD := (&echov1.EchoResponse{}).ProtoReflect().Descriptor()
	strMD := (&wrapperspb.StringValue{}).ProtoReflect().Descriptor()
	dynString := func(s string) proto.Message {
		m := dynamicpb.NewMessage(strMD)
		m.Set(strMD.Fields().ByNumber(1), protoreflect.ValueOfString(s))
		return m
	}
	cases := []struct {
		name  string
		svc   func() *anySvc
		req   func() any
		reply func() proto.Message
	}{
		{"request", func() *anySvc {
			return &anySvc{
				newReq: func() proto.Message { return dynamicpb.NewMessage(echoMD) },
				resp: func(req proto.Message) (proto.Message, error) {
					return wrapperspb.String(describeMsg(req)), nil
				},
			}
		}, func() any { return dynString("hello") }, func() proto.Message { return &wrapperspb.StringValue{} }},
		{"response", func() *anySvc {
			return &anySvc{
				newReq: func() proto.Message { return &echov1.EchoRequest{} },
				resp: func(proto.Message) (proto.Message, error) {
					return dynString("hello"), nil
				},
			}
		}, func() any { return &echov1.EchoRequest{Text: "hi"} }, func() proto.Message { return dynamicpb.NewMessage(respMD) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call := func(cc grpc.ClientConnInterface) (string, error) {
				reply := tc.reply()
				if err := cc.Invoke(context.Background(), anyUnary, tc.req(), reply); err != nil {
					return "", err
				}
				return describeMsg(reply), nil
			}
			want, err := call(anyReference(t, tc.svc()))
			if err != nil {
				t.Fatal(err)
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, tc.svc())
				var got string
				err := catch(func() (err error) { got, err = call(ch); return err })
				if err != nil || got != want {
					t.Errorf("reply %s, %v; grpc-go gives %s", got, err, want)
				}
			})
		})
	}
}

// TestAlternatingTypesOnStream: one client stream sends, in
// turn, messages of four Go types that share field 1 (StringValue,
// EchoRequest, BytesValue, a dynamic EchoRequest), so the plan kept for
// the last type sent must switch at every message; the handler receives
// each into the same EchoRequest. With Clone, the sender scribbles over and
// resets its message right after each Send. What the handler
// receives must be what grpc-go delivers, message for message,
// including the refusal of a BytesValue that is not UTF-8.
func TestAlternatingTypesOnStream(t *testing.T) {
	echoMD := (&echov1.EchoRequest{}).ProtoReflect().Descriptor()
	texts := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven\xff"}
	newSvc := func() *anySvc {
		return &anySvc{bidi: func(ss grpc.ServerStream) error {
			in := &echov1.EchoRequest{}
			for {
				err := ss.RecvMsg(in)
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := ss.SendMsg(&echov1.EchoResponse{Text: describeMsg(in)}); err != nil {
					return err
				}
			}
		}}
	}
	run := func(cc grpc.ClientConnInterface, scribble bool) ([]string, error) {
		s, err := cc.NewStream(context.Background(), anyBidiDesc, anyBidi)
		if err != nil {
			return nil, err
		}
		var got []string
		for i, text := range texts {
			var m proto.Message
			switch i % 4 {
			case 0:
				m = wrapperspb.String(text)
			case 1:
				m = &echov1.EchoRequest{Text: text}
			case 2:
				m = wrapperspb.Bytes([]byte(text))
			case 3:
				d := dynamicpb.NewMessage(echoMD)
				d.Set(echoMD.Fields().ByNumber(1), protoreflect.ValueOfString(text))
				m = d
			}
			if err := s.SendMsg(m); err != nil {
				got = append(got, "send: "+status.Code(err).String())
				break
			}
			if scribble { // allowed with Clone only
				if b, ok := m.(*wrapperspb.BytesValue); ok {
					for j := range b.Value {
						b.Value[j] = 'X'
					}
				}
				proto.Reset(m)
			}
			reply := &echov1.EchoResponse{}
			if err := s.RecvMsg(reply); err != nil {
				got = append(got, "recv: "+status.Code(err).String())
				break
			}
			got = append(got, reply.Text)
		}
		return got, nil
	}
	want, err := run(anyReference(t, newSvc()), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(texts) || !strings.HasPrefix(want[len(want)-1], "recv: "+codes.Internal.String()) {
		t.Fatalf("grpc-go gave %q", want)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, newSvc())
		var got []string
		err := catch(func() (err error) { got, err = run(ch, !isShare(t, m)); return err })
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("handler saw %q, %v; grpc-go's saw %q", got, err, want)
		}
	})
}

// TestSharedCachedResponse: a handler answers every call with the
// same response object, as handlers that cache an answer do. Over a
// socket each client gets its own decoded copy. With Clone, clients that
// scribble over their reply's bytes, list and unknown fields in place
// must not change what the next callers get; with Share, clients change
// only their reply's top level, which is theirs. Run with -race.
func TestSharedCachedResponse(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		shared := &listv1.ListResponse{Strings: []string{"a", "b", "c"}}
		shared.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), []byte("unknown")))
		want := proto.Clone(shared)
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, &anySvc{
			newReq: func() proto.Message { return &echov1.EchoRequest{} },
			resp:   func(proto.Message) (proto.Message, error) { return shared, nil },
		})
		clone := !isShare(t, m)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for range 100 {
					reply := &listv1.ListResponse{}
					if err := ch.Invoke(context.Background(), anyUnary, &echov1.EchoRequest{Text: "x"}, reply); err != nil {
						errs <- err
						return
					}
					if !proto.Equal(reply, want) {
						errs <- fmt.Errorf("reply %v, want %v", reply, want)
						return
					}
					if clone {
						reply.Strings[0] = "scribbled"
						for i := range reply.ProtoReflect().GetUnknown() {
							reply.ProtoReflect().GetUnknown()[i] = 'X'
						}
					} else {
						reply.Strings = nil
						reply.ProtoReflect().SetUnknown(nil)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if !proto.Equal(shared, want) {
			t.Errorf("the handler's cached response became %v", shared)
		}
	})
}
