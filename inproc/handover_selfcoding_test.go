package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// oracleSelf is a proto2 message as gogoproto generates them: no
// ProtoReflect, its own Marshal, Unmarshal and Size, and a required
// field. Its Marshal refuses a message whose Fail is set, and its
// Unmarshal a text of "refused on decode", as gogoproto's custom types
// may refuse values.
type oracleSelf struct {
	Text             *string `protobuf:"bytes,1,req,name=text" json:"text,omitempty"`
	Fail             *bool   `protobuf:"varint,2,opt,name=fail" json:"fail,omitempty"`
	XXX_unrecognized []byte  `json:"-"`
	XXX_sizecache    int32   `json:"-"`
}

const oracleRefused = "refused on decode"

func (m *oracleSelf) Reset() { *m = oracleSelf{} }
func (m *oracleSelf) String() string {
	return fmt.Sprintf("text=%v fail=%v", m.Text != nil, m.Fail != nil)
}
func (*oracleSelf) ProtoMessage() {}

func (m *oracleSelf) Size() int {
	b, _ := m.Marshal()
	return len(b)
}

func (m *oracleSelf) Marshal() ([]byte, error) {
	var b []byte
	if m == nil {
		return nil, nil // as gogoproto's Size is, nil-safe
	}
	if m.Text != nil {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), *m.Text)
	}
	if m.Fail != nil {
		if *m.Fail {
			return nil, errors.New("oracleSelf: refused on encode")
		}
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), 0)
	}
	return append(b, m.XXX_unrecognized...), nil
}

func (m *oracleSelf) Unmarshal(b []byte) error {
	return eachWireField("oracleSelf", b, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, _ := protowire.ConsumeString(value)
			if v == oracleRefused {
				return errors.New("oracleSelf: refused on decode")
			}
			m.Text = &v
		case num == 2 && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(value)
			f := v != 0
			m.Fail = &f
		default:
			m.XXX_unrecognized = append(m.XXX_unrecognized, field...)
		}
		return nil
	})
}

// eachWireField calls f with each field of b in turn: its number and wire
// type, the whole field (tag and value) and its value; it stops at f's
// first error, and fails, as name's Unmarshal, at a malformed field.
func eachWireField(name string, b []byte, f func(num protowire.Number, typ protowire.Type, field, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New(name + ": bad tag")
		}
		l := protowire.ConsumeFieldValue(num, typ, b[n:])
		if l < 0 {
			return errors.New(name + ": bad field")
		}
		if err := f(num, typ, b[:n+l], b[n:n+l]); err != nil {
			return err
		}
		b = b[n+l:]
	}
	return nil
}

var _ protoadapt.MessageV1 = (*oracleSelf)(nil)

// oracleRawSvc is a service whose handlers receive into whatever Go
// value newIn makes (a gogoproto message itself, not protobuf's wrapper
// of it) and answer with what out makes of it.
type oracleRawSvc struct {
	newIn func() any
	out   func(in any) any
	saw   chan string
	bidi  func(ss grpc.ServerStream) error // if set, the stream's handler
}

func oracleDescribe(m any) string {
	if v1, ok := m.(protoadapt.MessageV1); ok {
		return fmt.Sprintf("%T %s", m, wireOf(protoadapt.MessageV2Of(v1)))
	}
	return fmt.Sprintf("%T", m)
}

var oracleRawDesc = &grpc.ServiceDesc{
	ServiceName: "oracle.Raw",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		s := srv.(*oracleRawSvc)
		in := s.newIn()
		if err := dec(in); err != nil {
			if status.Code(err) != codes.Canceled { // a client that failed its own send cancels, sooner or later
				s.saw <- "recv " + status.Code(err).String()
			}
			return nil, err
		}
		s.saw <- oracleDescribe(in)
		return s.out(in), nil
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Bidi", ServerStreams: true, ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		s := srv.(*oracleRawSvc)
		if s.bidi != nil {
			return s.bidi(ss)
		}
		for {
			in := s.newIn()
			if err := ss.RecvMsg(in); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				if status.Code(err) != codes.Canceled { // a client that failed its own send cancels, sooner or later
					s.saw <- "recv " + status.Code(err).String()
				}
				return err
			}
			s.saw <- oracleDescribe(in)
			if err := ss.SendMsg(s.out(in)); err != nil {
				return err // not told: with Inline, SendMsg learns of the client's failure
			}
		}
	}}},
}

// oracleRawRun sends req by the unary method and by the bidi one, and
// receives the answers into what newReply makes.
func oracleRawRun(cc grpc.ClientConnInterface, svc *oracleRawSvc, req any, newReply func() any) string {
	var b strings.Builder
	reply := newReply()
	err := catch(func() error { return cc.Invoke(context.Background(), "/oracle.Raw/Unary", req, reply) })
	fmt.Fprintf(&b, "unary: handler [%s] client ", oracleDrain(svc.saw))
	if err != nil {
		fmt.Fprintf(&b, "code=%v", status.Code(err))
	} else {
		b.WriteString(oracleDescribe(reply))
	}
	err = catch(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		s, err := cc.NewStream(ctx, anyBidiDesc, "/oracle.Raw/Bidi")
		if err != nil {
			return err
		}
		if err := s.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		b.WriteString(" | stream: client")
		for {
			in := newReply()
			if err := s.RecvMsg(in); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			b.WriteString(" " + oracleDescribe(in))
		}
	})
	if err != nil {
		fmt.Fprintf(&b, " code=%v", status.Code(err))
	}
	fmt.Fprintf(&b, " handler [%s]", oracleDrain(svc.saw))
	return b.String()
}

// TestHandoverSelfCodingChecks: grpc-go hands a gogoproto message to
// protobuf's Marshal and Unmarshal, which call the message's own methods
// and then check its required fields: a receiver's message missing one
// is refused (Internal), a Marshal that fails fails the send, an
// Unmarshal that fails fails the receive. In-process, every mode must
// agree, in both directions of a unary call and of a stream.
func TestHandoverSelfCodingChecks(t *testing.T) {
	self := func() any { return &oracleSelf{} }
	cases := []struct {
		name     string
		req      func() any
		newIn    func() any
		out      func(in any) any
		newReply func() any
	}{
		// The sender's type has no required field; the receiver's has.
		{"required-missing/request", func() any { return &emptypb.Empty{} }, self,
			func(any) any { return &emptypb.Empty{} }, func() any { return &emptypb.Empty{} }},
		{"required-missing/response", func() any { return &emptypb.Empty{} }, func() any { return &emptypb.Empty{} },
			func(any) any { return &emptypb.Empty{} }, self},
		{"required-missing/other-self-coder", func() any { return &selfCoded{Data: []byte("d")} }, self,
			func(any) any { return &selfCoded{Data: []byte("d")} }, self},
		{"required-present/from-generated", func() any { return wrapperspb.String("t") }, self,
			func(in any) any { return in }, self},
		{"marshal-fails/request", func() any { return &oracleSelf{Text: proto.String("t"), Fail: proto.Bool(true)} }, self,
			func(any) any { return &oracleSelf{Text: proto.String("ok")} }, self},
		{"marshal-fails/response", func() any { return &oracleSelf{Text: proto.String("t")} }, self,
			func(any) any { return &oracleSelf{Text: proto.String("t"), Fail: proto.Bool(true)} }, self},
		{"unmarshal-fails/request", func() any { return &oracleSelf{Text: proto.String(oracleRefused)} }, self,
			func(any) any { return &oracleSelf{Text: proto.String("ok")} }, self},
		{"unmarshal-fails/response", func() any { return &oracleSelf{Text: proto.String("t")} }, self,
			func(any) any { return &oracleSelf{Text: proto.String(oracleRefused)} }, self},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := &oracleRawSvc{newIn: c.newIn, out: c.out, saw: make(chan string, 16)}
			ref := realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil)
			want := oracleRawRun(ref, svc, c.req(), c.newReply)
			forEachMode(t, func(t *testing.T, m testMode) {
				svc := &oracleRawSvc{newIn: c.newIn, out: c.out, saw: make(chan string, 16)}
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				got := oracleRawRun(ch, svc, c.req(), c.newReply)
				if isShare(t, m) && (strings.HasPrefix(c.name, "marshal-fails") || strings.HasPrefix(c.name, "unmarshal-fails")) {
					// Share calls neither a self-coding message's Marshal
					// nor its Unmarshal (see inproc.Share): what only they
					// refuse crosses, and the call succeeds.
					if strings.Contains(got, "code=") {
						t.Errorf("Share refused what only the message's own coding refuses:\n%s", got)
					}
					return
				}
				if got != want {
					t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

// TestHandoverNilMessages: untyped and typed nil messages, as requests, as
// unary responses and as stream messages both ways, of a flat type, an
// open one, a proto2 one with a required field, and a self-coding one.
func TestHandoverNilMessages(t *testing.T) {
	cases := []struct {
		name string
		nil_ func() any
		recv func() any
	}{
		{"untyped", func() any { return nil }, func() any { return &typepbType{} }},
		{"flat", func() any { return (*typepbType)(nil) }, func() any { return &typepbType{} }},
		{"proto2-required", func() any { return (*proto2Record)(nil) }, func() any { return &proto2Record{} }},
		{"self-coding-required", func() any { return (*oracleSelf)(nil) }, func() any { return &oracleSelf{} }},
		// A typed nil selfCoded is left out: its Marshal panics on nil,
		// as grpc-go finds when it calls it; inproc does not call it.
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			newSvc := func() *oracleRawSvc {
				return &oracleRawSvc{newIn: c.recv, out: func(any) any { return c.nil_() }, saw: make(chan string, 16)}
			}
			svc := newSvc()
			ref := realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil)
			want := oracleRawRun(ref, svc, c.nil_(), c.recv)
			forEachMode(t, func(t *testing.T, m testMode) {
				svc := newSvc()
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				if got := oracleRawRun(ch, svc, c.nil_(), c.recv); got != want {
					t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

type (
	typepbType   = typepb.Type
	proto2Record = proto2.Record
)
