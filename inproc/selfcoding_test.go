package inproc_test

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/emptypb"
)

// selfCoded is a message as gogoproto generates them: no ProtoReflect,
// and its own Marshal, Unmarshal and Size, which check no UTF-8. It
// counts its calls of each, so that a test can tell what crossing costs.
type selfCoded struct {
	Text                 string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	Data                 []byte `protobuf:"bytes,2,opt,name=data,proto3" json:"data,omitempty"`
	XXX_NoUnkeyedLiteral struct{}
	XXX_sizecache        int32
}

var selfCodedCalls struct{ marshal, unmarshal, size atomic.Int64 }

func (m *selfCoded) Reset()         { *m = selfCoded{} }
func (m *selfCoded) String() string { return fmt.Sprintf("%q %q", m.Text, m.Data) }
func (*selfCoded) ProtoMessage()    {}

func (m *selfCoded) Size() int {
	selfCodedCalls.size.Add(1)
	return m.size()
}

func (m *selfCoded) size() int {
	n := 0
	if m.Text != "" {
		n += 1 + protowire.SizeBytes(len(m.Text))
	}
	if len(m.Data) > 0 {
		n += 1 + protowire.SizeBytes(len(m.Data))
	}
	return n
}

func (m *selfCoded) Marshal() ([]byte, error) {
	selfCodedCalls.marshal.Add(1)
	b := make([]byte, 0, m.size())
	if m.Text != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), m.Text)
	}
	if len(m.Data) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), m.Data)
	}
	return b, nil
}

func (m *selfCoded) Unmarshal(b []byte) error {
	selfCodedCalls.unmarshal.Add(1)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return fmt.Errorf("selfCoded: bad tag")
		}
		v, m2 := protowire.ConsumeBytes(b[n:])
		if m2 < 0 {
			return fmt.Errorf("selfCoded: bad field")
		}
		switch num {
		case 1:
			m.Text = string(v)
		case 2:
			m.Data = append([]byte(nil), v...)
		}
		b = b[n+m2:]
	}
	return nil
}

var _ protoadapt.MessageV1 = (*selfCoded)(nil)

// TestSelfCodingMessages sends self-coding messages (gogoproto's kind)
// through a server stream, over grpc-go and in each mode, and checks that
// what arrives is the same, a string that is not UTF-8 included (their
// own Marshal checks none, so a socket carries it), and what crossing
// costs per message: Clone encodes once and decodes once, Share neither,
// where grpc-go encodes twice (once to learn the size) and decodes once.
func TestSelfCodingMessages(t *testing.T) {
	const n = 50
	sent := func(i int) *selfCoded {
		return &selfCoded{Text: fmt.Sprintf("message %d \xff", i), Data: []byte{byte(i)}}
	}
	svc := &anySvc{newReq: func() proto.Message { return protoadapt.MessageV2Of(&selfCoded{}) }, bidi: func(ss grpc.ServerStream) error {
		for i := range n {
			if err := ss.SendMsg(sent(i)); err != nil {
				return err
			}
		}
		return nil
	}}
	run := func(cc grpc.ClientConnInterface) (got []string, marshals, unmarshals int64, err error) {
		stream, err := cc.NewStream(context.Background(), anyBidiDesc, anyBidi)
		if err != nil {
			return nil, 0, 0, err
		}
		if err := stream.CloseSend(); err != nil {
			return nil, 0, 0, err
		}
		m0, u0 := selfCodedCalls.marshal.Load(), selfCodedCalls.unmarshal.Load()
		for {
			m := &selfCoded{}
			if err := stream.RecvMsg(m); err != nil {
				if err == io.EOF {
					err = nil
				}
				return got, selfCodedCalls.marshal.Load() - m0, selfCodedCalls.unmarshal.Load() - u0, err
			}
			got = append(got, m.String())
		}
	}
	want, wantM, wantU, err := run(anyReference(t, svc))
	if err != nil || len(want) != n {
		t.Fatalf("grpc-go: %d messages, %v", len(want), err)
	}
	t.Logf("grpc-go: %d Marshal and %d Unmarshal calls for %d messages", wantM, wantU, n)
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc)
		got, marshals, unmarshals, err := run(ch)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("inproc got %d messages, %v; grpc-go %d\ninproc  %.200q\ngrpc-go %.200q", len(got), err, len(want), got, want)
		}
		maxCalls := int64(n)
		if isShare(t, m) {
			maxCalls = 0
		}
		if marshals > maxCalls || unmarshals > maxCalls {
			t.Errorf("%d Marshal and %d Unmarshal calls for %d messages, want at most %d of each", marshals, unmarshals, n, maxCalls)
		}
	})
}

// selfCodedRequired is a proto2 self-coding message with a required
// field: protobuf checks it after the message's own Unmarshal.
type selfCodedRequired struct {
	Text                 *string `protobuf:"bytes,1,req,name=text" json:"text,omitempty"`
	XXX_NoUnkeyedLiteral struct{}
	XXX_sizecache        int32
}

func (m *selfCodedRequired) Reset()         { *m = selfCodedRequired{} }
func (m *selfCodedRequired) String() string { return fmt.Sprint(m.Text) }
func (*selfCodedRequired) ProtoMessage()    {}
func (m *selfCodedRequired) Size() int      { b, _ := m.Marshal(); return len(b) }

func (m *selfCodedRequired) Marshal() ([]byte, error) {
	if m.Text == nil {
		return nil, nil // as lax as some hand-written coders are: protobuf checks
	}
	return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), *m.Text), nil
}

func (m *selfCodedRequired) Unmarshal(b []byte) error {
	for len(b) > 0 {
		num, _, n := protowire.ConsumeTag(b)
		v, m2 := protowire.ConsumeBytes(b[max(n, 0):])
		if n < 0 || m2 < 0 {
			return fmt.Errorf("selfCodedRequired: bad field")
		}
		if num == 1 {
			s := string(v)
			m.Text = &s
		}
		b = b[n+m2:]
	}
	return nil
}

// TestSelfCodingRequiredChecked sends a message of another type that
// leaves a self-coding handler's required field unset: over a socket
// protobuf refuses it after the message's own Unmarshal, and in-process
// it must too; and a message that sets it passes.
func TestSelfCodingRequiredChecked(t *testing.T) {
	desc := &grpc.ServiceDesc{
		ServiceName: "attack.Any",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(&selfCodedRequired{}); err != nil { // the Go type itself, unwrapped
				return nil, err
			}
			return &emptypb.Empty{}, nil
		}}},
	}
	run := func(cc grpc.ClientConnInterface) string {
		var out []string
		for _, req := range []proto.Message{&echov1.EchoRequest{}, &echov1.EchoRequest{Text: "set"}} {
			err := cc.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{})
			out = append(out, status.Code(err).String())
		}
		return fmt.Sprint(out)
	}
	want := run(realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(desc, struct{}{}) }, nil, nil))
	t.Logf("grpc-go: %s", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(desc, struct{}{})
		if got := run(ch); got != want {
			t.Errorf("inproc %s, grpc-go %s", got, want)
		}
	})
}

// probeGogoMap is a gogoproto-style message (Marshal, Unmarshal, Size of
// its own, XXX_unrecognized) with a map, bytes and a list.
type probeGogoMap struct {
	S                string            `protobuf:"bytes,1,opt,name=s,proto3" json:"s,omitempty"`
	Kv               map[string]string `protobuf:"bytes,2,rep,name=kv,proto3" json:"kv,omitempty" protobuf_key:"bytes,1,opt,name=key,proto3" protobuf_val:"bytes,2,opt,name=value,proto3"`
	B                []byte            `protobuf:"bytes,3,opt,name=b,proto3" json:"b,omitempty"`
	Names            []string          `protobuf:"bytes,4,rep,name=names,proto3" json:"names,omitempty"`
	XXX_unrecognized []byte            `json:"-"`
	XXX_sizecache    int32             `json:"-"`
}

func (m *probeGogoMap) Reset() { *m = probeGogoMap{} }
func (m *probeGogoMap) String() string {
	var kv []string
	for k, v := range m.Kv {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return fmt.Sprintf("s=%q kv nil=%v [%s] b nil=%v names nil=%v %q unrecognized nil=%v", m.S, m.Kv == nil, strings.Join(kv, " "), m.B == nil, m.Names == nil, m.Names, m.XXX_unrecognized == nil)
}
func (*probeGogoMap) ProtoMessage() {}

func (m *probeGogoMap) Marshal() ([]byte, error) {
	var b []byte
	if m.S != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), m.S)
	}
	keys := make([]string, 0, len(m.Kv))
	for k := range m.Kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), k)
		e = protowire.AppendString(protowire.AppendTag(e, 2, protowire.BytesType), m.Kv[k])
		b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), e)
	}
	if len(m.B) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, 3, protowire.BytesType), m.B)
	}
	for _, s := range m.Names {
		b = protowire.AppendString(protowire.AppendTag(b, 4, protowire.BytesType), s)
	}
	return append(b, m.XXX_unrecognized...), nil
}

func (m *probeGogoMap) Size() int { b, _ := m.Marshal(); return len(b) }

func (m *probeGogoMap) Unmarshal(b []byte) error {
	return eachWireField("probeGogoMap", b, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		v, _ := protowire.ConsumeBytes(value)
		switch {
		case typ != protowire.BytesType:
			m.XXX_unrecognized = append(m.XXX_unrecognized, field...)
		case num == 1:
			m.S = string(v)
		case num == 2:
			var k, val string
			if err := eachWireField("entry", v, func(n protowire.Number, _ protowire.Type, _, ev []byte) error {
				s, _ := protowire.ConsumeString(ev)
				if n == 1 {
					k = s
				} else {
					val = s
				}
				return nil
			}); err != nil {
				return err
			}
			if m.Kv == nil {
				m.Kv = map[string]string{}
			}
			m.Kv[k] = val
		case num == 3:
			m.B = append([]byte{}, v...)
		case num == 4:
			m.Names = append(m.Names, string(v))
		default:
			m.XXX_unrecognized = append(m.XXX_unrecognized, field...)
		}
		return nil
	})
}

var _ protoadapt.MessageV1 = (*probeGogoMap)(nil)

// TestShareSelfCodingMapAsGRPC: a gogoproto-style message crosses
// by its own Marshal and Unmarshal over grpc-go. The handler writes into
// its request's map (with Share, a copy of the client's) and appends to
// its list; the client's message must not change, and empty containers
// arrive as its Unmarshal leaves them (nil).
func TestShareSelfCodingMapAsGRPC(t *testing.T) {
	for _, c := range []struct {
		name string
		msg  func() *probeGogoMap
	}{
		{"full", func() *probeGogoMap {
			return &probeGogoMap{S: "client's", Kv: map[string]string{"c": "c"}, B: []byte("b"), Names: append(make([]string, 0, 4), "c")}
		}},
		{"empties", func() *probeGogoMap {
			return &probeGogoMap{S: "client's", Kv: map[string]string{}, B: []byte{}, Names: []string{}, XXX_unrecognized: []byte{}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			probeRawAgree(t, func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &probeRawSvc{newIn: func() any { return &probeGogoMap{} }, handle: func(in any) (any, error) {
					m := in.(*probeGogoMap)
					saw <- m.String()
					if m.Kv == nil {
						m.Kv = map[string]string{}
					}
					m.Kv["h"] = "h"
					m.Names = append(m.Names, "h")
					return c.msg(), nil
				}}
				req := c.msg()
				before := req.String()
				reply := &probeGogoMap{}
				if err := serve(svc).Invoke(context.Background(), probeRawUnary, req, reply); err != nil {
					return probeErr(err)
				}
				out := "handler: " + receive(t, saw, "the handler") + " | client: " + reply.String()
				if after := req.String(); after != before {
					out += " | the handler's writes reached the client's message: " + after
				}
				return out
			})
		})
	}
}
