package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// statusLine is how a call ended, as a client sees it: code and
// message, which is what status.Convert(err) gives a program.
func statusLine(err error) string {
	if err == nil {
		return "OK"
	}
	st := status.Convert(err)
	return fmt.Sprintf("%v: %q", st.Code(), st.Message())
}

// utf8StatusCase is a message a sender sends and the message type its
// receiver decodes into.
type utf8StatusCase struct {
	name string
	send func() proto.Message
	recv func() proto.Message
}

func utf8StatusCases() []utf8StatusCase {
	dyn := func(m proto.Message) func() proto.Message {
		return func() proto.Message {
			d := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
			proto.Merge(d, m)
			return d
		}
	}
	return []utf8StatusCase{
		{"generated/echo", func() proto.Message { return &echov1.EchoRequest{Text: badUTF8} }, func() proto.Message { return &echov1.EchoRequest{} }},
		{"generated/flat-list", func() proto.Message { return &flat3.Flat{Names: []string{"a", badUTF8}} }, func() proto.Message { return &flat3.Flat{} }},
		{"generated/map", func() proto.Message { return &flat3.Rich{Kv: map[string]string{"k": badUTF8}} }, func() proto.Message { return &flat3.Rich{} }},
		{"generated/oneof", func() proto.Message { return &flat3.Rich{Pick: &flat3.Rich_Os{Os: badUTF8}} }, func() proto.Message { return &flat3.Rich{} }},
		{"generated/editions-ext", func() proto.Message {
			m := &editionsutf8.Root{}
			proto.SetExtension(m, editionsutf8.E_ExtS, badUTF8)
			return m
		}, func() proto.Message { return &editionsutf8.Root{} }},
		{"dynamic", dyn(&echov1.EchoRequest{Text: badUTF8}), func() proto.Message { return &echov1.EchoRequest{} }},
		// The sender's field is not checked (utf8_validation NONE); the
		// receiver's type, of the same field number, is proto3: its
		// decoding refuses.
		{"receiver-refuses", func() proto.Message { return &editionsutf8.Unchecked{S: badUTF8} }, func() proto.Message { return &flat3.Leaf{} }},
	}
}

// utf8StatusRun sends c's message as a unary request, as a unary
// response, and on a bidi stream both ways, and tells how each ended.
func utf8StatusRun(t *testing.T, c utf8StatusCase, conn func(*anySvc) grpc.ClientConnInterface) string {
	t.Helper()
	var out []string
	// A unary request.
	cc := conn(&anySvc{newReq: c.recv})
	err := cc.Invoke(context.Background(), anyUnary, c.send(), &emptypb.Empty{})
	out = append(out, "unary request: "+statusLine(err))
	// A unary response.
	cc = conn(&anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }, resp: func(proto.Message) (proto.Message, error) { return c.send(), nil }})
	err = cc.Invoke(context.Background(), anyUnary, &emptypb.Empty{}, c.recv())
	out = append(out, "unary response: "+statusLine(err))
	// A stream: the client sends, the handler receives.
	handlerErr := make(chan string, 1)
	cc = conn(&anySvc{bidi: func(ss grpc.ServerStream) error {
		err := ss.RecvMsg(c.recv())
		handlerErr <- statusLine(err)
		return err
	}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	s, err := cc.NewStream(ctx, anyBidiDesc, anyBidi)
	if err != nil {
		t.Fatal(err)
	}
	if sendErr := s.SendMsg(c.send()); sendErr == nil {
		s.CloseSend()
		// The client's RecvMsg first: with Inline it runs the handler.
		recvErr := s.RecvMsg(c.recv())
		out = append(out, "stream request: client send OK, handler recv "+receive(t, handlerErr, "the handler's RecvMsg")+", client recv "+statusLine(recvErr))
	} else {
		// (With Inline the handler never runs, as Inline's doc says: its
		// client left before driving it.)
		out = append(out, "stream request: client send "+statusLine(sendErr)+", client recv "+statusLine(s.RecvMsg(c.recv())))
	}
	// A stream: the handler sends, the client receives.
	handlerSendErr := make(chan string, 1)
	cc = conn(&anySvc{bidi: func(ss grpc.ServerStream) error {
		err := ss.SendMsg(c.send())
		handlerSendErr <- statusLine(err)
		return err
	}})
	s, err = cc.NewStream(ctx, anyBidiDesc, anyBidi)
	if err != nil {
		t.Fatal(err)
	}
	err = s.RecvMsg(c.recv())
	var then error
	if err == nil {
		// With Inline, the handler's SendMsg returns once the client
		// takes the message and asks for more.
		then = s.RecvMsg(c.recv())
	}
	// What the handler's SendMsg returns when the client's decoding
	// fails depends on timing over a socket (and with Inline it waits for
	// the client): only a failure of its own counts.
	if hs := receive(t, handlerSendErr, "the handler's SendMsg"); strings.HasPrefix(hs, "Internal") {
		out = append(out, "stream response: handler send "+hs)
	}
	out = append(out, "stream response: client recv "+statusLine(err))
	if err == nil && !errors.Is(then, io.EOF) {
		out = append(out, "then "+statusLine(then))
	}
	return strings.Join(out, "\n")
}

// TestUTF8StatusMessageAsGRPC: a string that is not UTF-8 ends the call
// with Internal, as over grpc-go; the status's message must be grpc-go's
// too, which is what a program logs or matches (protobuf's fast path says
// "string field contains invalid UTF-8", naming no field).
func TestUTF8StatusMessageAsGRPC(t *testing.T) {
	for _, c := range utf8StatusCases() {
		t.Run(c.name, func(t *testing.T) {
			anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				return utf8StatusRun(t, c, serve)
			})
		})
	}
}
