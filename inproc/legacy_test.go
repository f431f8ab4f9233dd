package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// legacyMsg is a message as old generators made them: no ProtoReflect,
// XXX_ fields, proto3 tags. protobuf-go (and so grpc-go's codec) derives
// its descriptor from the tags.
type legacyMsg struct {
	Text                 string   `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	Data                 []byte   `protobuf:"bytes,2,opt,name=data,proto3" json:"data,omitempty"`
	List                 []string `protobuf:"bytes,3,rep,name=list,proto3" json:"list,omitempty"`
	XXX_NoUnkeyedLiteral struct{} `json:"-"`
	XXX_unrecognized     []byte   `json:"-"`
	XXX_sizecache        int32    `json:"-"`
}

func (m *legacyMsg) Reset()         { *m = legacyMsg{} }
func (m *legacyMsg) String() string { return fmt.Sprintf("%q %q %q", m.Text, m.Data, m.List) }
func (*legacyMsg) ProtoMessage()    {}

var _ protoadapt.MessageV1 = (*legacyMsg)(nil)

// TestLegacyMessages sends messages of an old generated type
// (no ProtoReflect: protobuf wraps it, and every such type shares the
// wrapper's Go type) through a unary call both ways, alternating with a
// generated type on the same method so the kept plans switch, and
// compares with grpc-go: the values delivered, the refusal of invalid
// UTF-8, and, with Clone, that the sender's changes right after the call
// do not reach the handler's copy.
func TestLegacyMessages(t *testing.T) {
	newSvc := func(seen chan<- string) *anySvc {
		return &anySvc{
			newReq: func() proto.Message { return protoadapt.MessageV2Of(&legacyMsg{}) },
			resp: func(req proto.Message) (proto.Message, error) {
				in := protoadapt.MessageV1Of(req).(*legacyMsg)
				seen <- in.String()
				return protoadapt.MessageV2Of(&legacyMsg{Text: in.Text + "!", Data: in.Data, List: in.List}), nil
			},
		}
	}
	run := func(cc grpc.ClientConnInterface, seen <-chan string, scribble bool) []string {
		var out []string
		for i, req := range []any{
			&legacyMsg{Text: "a", Data: []byte("data"), List: []string{"x", "y"}},
			&echov1.EchoRequest{Text: "generated"},
			&legacyMsg{Text: "b", Data: []byte("more")},
			&legacyMsg{Text: "bad\xff"},
			&legacyMsg{Text: "c", List: []string{"ok", "bad\xff"}},
		} {
			reply := &legacyMsg{}
			err := cc.Invoke(context.Background(), anyUnary, req, reply)
			if l, ok := req.(*legacyMsg); ok && scribble {
				for j := range l.Data {
					l.Data[j] = 'X'
				}
				if len(l.List) > 0 {
					l.List[0] = "scribbled"
				}
			}
			got := ""
			if err == nil {
				got = <-seen
			}
			out = append(out, fmt.Sprintf("%d: %v | handler %s | reply %s", i, status.Code(err), got, reply))
		}
		return out
	}
	seen := make(chan string, 1)
	want := run(anyReference(t, newSvc(seen)), seen, false)
	if want[3][:len("3: Internal")] != "3: "+codes.Internal.String() {
		t.Fatalf("grpc-go: %q", want)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan string, 1)
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, newSvc(seen))
		var got []string
		if err := catch(func() error { got = run(ch, seen, !isShare(t, m)); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("inproc %q\ngrpc-go %q", got, want)
				break
			}
		}
	})
}

// TestTypedNilMessages: a typed nil request or response encodes as an
// empty message over a socket; inproc must deliver an empty message too,
// also right after a non-nil message of the same type set the kept plan.
func TestTypedNilMessages(t *testing.T) {
	svc := func() *funcEcho {
		return &funcEcho{get: func(_ context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if req.Text == "" {
				return nil, status.Error(codes.InvalidArgument, "empty") // over a socket a typed nil arrives empty
			}
			if req.Text == "nil" {
				return (*echov1.EchoResponse)(nil), nil
			}
			return &echov1.EchoResponse{Text: req.Text}, nil
		}}
	}
	run := func(c echov1.EchoClient) []string {
		var out []string
		for _, req := range []*echov1.EchoRequest{{Text: "x"}, nil, {Text: "nil"}, {Text: "y"}, {Text: "nil"}} {
			resp, err := c.Get(context.Background(), req)
			out = append(out, fmt.Sprintf("%v %q", status.Code(err), resp.GetText()))
		}
		return out
	}
	want := run(echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, svc()) }, nil, nil)))
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, svc())
		var got []string
		if err := catch(func() error { got = run(c); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("inproc %q, grpc-go %q", got, want)
		}
	})
}

// probeOuter is a legacy proto3 message without coding methods of its
// own (a planned message in-process, shared with Share) that holds
// legacyCoded messages: protobuf encodes those by their own Marshal
// (which checks no UTF-8 and may fail) and decodes them by their own
// Unmarshal, wherever they are nested.
type probeOuter struct {
	S                string         `protobuf:"bytes,1,opt,name=s,proto3" json:"s,omitempty"`
	Inner            *legacyCoded   `protobuf:"bytes,2,opt,name=inner,proto3" json:"inner,omitempty"`
	List             []*legacyCoded `protobuf:"bytes,3,rep,name=list,proto3" json:"list,omitempty"`
	XXX_unrecognized []byte         `json:"-"`
	XXX_sizecache    int32          `json:"-"`
}

func (m *probeOuter) Reset() { *m = probeOuter{} }
func (m *probeOuter) String() string {
	s := fmt.Sprintf("s=%q", m.S)
	if m.Inner != nil {
		s += fmt.Sprintf(" inner{%s}", m.Inner)
	}
	for _, l := range m.List {
		s += fmt.Sprintf(" list{%s}", l)
	}
	return s
}
func (*probeOuter) ProtoMessage() {}

var _ protoadapt.MessageV1 = (*probeOuter)(nil)

// TestNestedLegacyOwnMarshalAsGRPC: the commit sends a legacy
// message with a Marshal of its own (and not a gogoproto's full set) by
// that Marshal, as protobuf encodes it, since its Marshal checks no
// UTF-8 and its errors are the sender's. protobuf does the same for such
// a message nested in another legacy one (a field, a list's element):
// over grpc-go the call succeeds with the invalid string and fails when
// the nested Marshal fails. In-process the outer message is checked by
// reflection, which looks into the nested one's strings and never calls
// its Marshal.
func TestNestedLegacyOwnMarshalAsGRPC(t *testing.T) {
	cases := []struct {
		name string
		req  func() *probeOuter
	}{
		{"field/invalid-utf8", func() *probeOuter { return &probeOuter{S: "s", Inner: &legacyCoded{Text: badUTF8}} }},
		{"list/invalid-utf8", func() *probeOuter { return &probeOuter{S: "s", List: []*legacyCoded{{Text: badUTF8}}} }},
		{"field/marshal-fails", func() *probeOuter { return &probeOuter{S: "s", Inner: &legacyCoded{Text: legacyRefused}} }},
		{"list/marshal-fails", func() *probeOuter {
			return &probeOuter{S: "s", List: []*legacyCoded{{Text: "a"}, {Text: legacyRefused}}}
		}},
		{"valid", func() *probeOuter { return &probeOuter{S: "s", Inner: &legacyCoded{Text: "fine"}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probeRawAgree(t, func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &probeRawSvc{newIn: func() any { return &probeOuter{} }, handle: func(in any) (any, error) {
					saw <- in.(*probeOuter).String()
					return &probeOuter{S: "reply"}, nil
				}}
				reply := &probeOuter{}
				if err := serve(svc).Invoke(context.Background(), probeRawUnary, c.req(), reply); err != nil {
					return probeErr(err)
				}
				return "handler: " + receive(t, saw, "the handler") + " | client: " + reply.String()
			})
		})
	}
}

// probeUnmarshalOnly is a legacy proto3 message with an Unmarshal of its
// own and no Marshal: protobuf-go encodes it by reflection and decodes it
// by its Unmarshal (legacyLoadMessageInfo takes each method on its own),
// so over grpc-go what the receiver gets is what that Unmarshal makes of
// the bytes. This one refuses a text it does not accept, as a validating
// Unmarshal would.
type probeUnmarshalOnly struct {
	Text             string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	XXX_unrecognized []byte `json:"-"`
	XXX_sizecache    int32  `json:"-"`
}

func (m *probeUnmarshalOnly) Reset()         { *m = probeUnmarshalOnly{} }
func (m *probeUnmarshalOnly) String() string { return fmt.Sprintf("text=%q", m.Text) }
func (*probeUnmarshalOnly) ProtoMessage()    {}

func (m *probeUnmarshalOnly) Unmarshal(b []byte) error {
	m.Reset()
	return eachWireField("probeUnmarshalOnly", b, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		if num == 1 && typ == protowire.BytesType {
			s, _ := protowire.ConsumeString(value)
			if s == legacyRefused {
				return errors.New("probeUnmarshalOnly: refused on decode")
			}
			m.Text = s
		} else {
			m.XXX_unrecognized = append(m.XXX_unrecognized, field...)
		}
		return nil
	})
}

// TestLegacyUnmarshalOnlyAsGRPC: grpc-go's receiver of a legacy
// message with only an Unmarshal of its own decodes it by that Unmarshal,
// which here refuses one text: the call fails with Internal ("failed to
// unmarshal"). The commit routes the Marshal-only case through the wire
// so that the type's own coding runs; the Unmarshal-only case is still
// shared with Share, and the receiver's Unmarshal never runs.
func TestLegacyUnmarshalOnlyAsGRPC(t *testing.T) {
	for _, text := range []string{"fine", legacyRefused} {
		t.Run(text, func(t *testing.T) {
			probeRawAgree(t, func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &probeRawSvc{newIn: func() any { return &probeUnmarshalOnly{} }, handle: func(in any) (any, error) {
					saw <- in.(*probeUnmarshalOnly).String()
					return &probeUnmarshalOnly{Text: "reply"}, nil
				}}
				reply := &probeUnmarshalOnly{}
				if err := serve(svc).Invoke(context.Background(), probeRawUnary, &probeUnmarshalOnly{Text: text}, reply); err != nil {
					return probeErr(err)
				}
				return "handler: " + receive(t, saw, "the handler") + " | client: " + reply.String()
			})
		})
	}
}

// legacyCoded is a legacy proto3 message (no ProtoReflect) that brings
// its own Marshal and Unmarshal but no Size, as hand-written or older
// generated messages may: protobuf-go's Marshal and Unmarshal call its
// methods (legacyLoadMessageInfo takes Marshal and Unmarshal each on its
// own), which check no UTF-8, and proto.Size calls its Marshal.
type legacyCoded struct {
	Text             string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	XXX_unrecognized []byte `json:"-"`
}

func (m *legacyCoded) Reset()         { *m = legacyCoded{} }
func (m *legacyCoded) String() string { return fmt.Sprintf("text=%q", m.Text) }
func (*legacyCoded) ProtoMessage()    {}

func (m *legacyCoded) Marshal() ([]byte, error) {
	if m.Text == legacyRefused {
		return nil, errors.New("legacyCoded: refused on encode")
	}
	var b []byte
	if m.Text != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), m.Text)
	}
	return append(b, m.XXX_unrecognized...), nil
}

func (m *legacyCoded) Unmarshal(b []byte) error {
	m.Reset()
	return eachWireField("legacyCoded", b, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		if num == 1 && typ == protowire.BytesType {
			m.Text, _ = protowire.ConsumeString(value)
		} else {
			m.XXX_unrecognized = append(m.XXX_unrecognized, field...)
		}
		return nil
	})
}

var _ protoadapt.MessageV1 = (*legacyCoded)(nil)

// legacyRefused is a text legacyCoded's Marshal refuses.
const legacyRefused = "refused on encode"

// legacyMarshalOnly is legacyCoded with a Marshal and no Unmarshal:
// protobuf decodes it by reflection (which checks UTF-8, proto3), and
// encodes it by its Marshal (which does not).
type legacyMarshalOnly struct {
	Text             string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	XXX_unrecognized []byte `json:"-"`
}

func (m *legacyMarshalOnly) Reset()         { *m = legacyMarshalOnly{} }
func (m *legacyMarshalOnly) String() string { return fmt.Sprintf("text=%q", m.Text) }
func (*legacyMarshalOnly) ProtoMessage()    {}

func (m *legacyMarshalOnly) Marshal() ([]byte, error) {
	return (&legacyCoded{Text: m.Text, XXX_unrecognized: m.XXX_unrecognized}).Marshal()
}

// TestLegacyOwnMarshalWithoutSizeAsGRPC: grpc-go encodes a legacy message
// that has its own Marshal by that Marshal (protobuf-go's legacy wrapper
// calls it whether or not the message also has a Size, and proto.Size
// calls it too), so a proto3 string that is not UTF-8 goes out, and a
// receiver whose type decodes by its own Unmarshal takes it; and a
// Marshal that fails fails the send. In-process the same message must
// cross (or fail) as it does over grpc-go. Only full gogoproto-style
// types (Marshal, Unmarshal and Size) are "self-coding" in-process;
// these, which lack Size, must cross by their own Marshal all the same,
// not be checked by reflection (which checks UTF-8 and drops their
// Marshal's errors).
func TestLegacyOwnMarshalWithoutSizeAsGRPC(t *testing.T) {
	cases := []struct {
		name string
		req  func() any
		recv func() any
	}{
		{"marshal+unmarshal", func() any { return &legacyCoded{Text: badUTF8} }, func() any { return &legacyCoded{} }},
		// The receiver decodes into the type with an Unmarshal of its
		// own: only the sender's side differs.
		{"marshal-only", func() any { return &legacyMarshalOnly{Text: badUTF8} }, func() any { return &legacyCoded{} }},
		// Its Marshal fails: grpc-go's send fails (Internal).
		{"marshal-fails", func() any { return &legacyCoded{Text: legacyRefused} }, func() any { return &legacyCoded{} }},
		{"valid", func() any { return &legacyCoded{Text: "fine"} }, func() any { return &legacyCoded{} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := &oracleRawSvc{saw: make(chan string, 64), newIn: c.recv, out: func(in any) any { return in }}
			want := oracleRawRun(realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, svc) }, nil, nil), svc, c.req(), c.recv)
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(oracleRawDesc, svc)
				if got := oracleRawRun(ch, svc, c.req(), c.recv); got != want {
					t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

// probeReqMarshalOnly is a legacy proto2 message with a required field
// and a Marshal of its own (and no Unmarshal): protobuf encodes it by
// that Marshal and then checks its required fields by reflection, so an
// unset one fails the send even though the Marshal succeeded.
type probeReqMarshalOnly struct {
	Name             *string `protobuf:"bytes,1,req,name=name" json:"name,omitempty"`
	Note             *string `protobuf:"bytes,2,opt,name=note" json:"note,omitempty"`
	XXX_unrecognized []byte  `json:"-"`
}

func (m *probeReqMarshalOnly) Reset() { *m = probeReqMarshalOnly{} }
func (m *probeReqMarshalOnly) String() string {
	return fmt.Sprintf("name=%v note=%v", m.Name != nil, m.Note != nil)
}
func (*probeReqMarshalOnly) ProtoMessage() {}

func (m *probeReqMarshalOnly) Marshal() ([]byte, error) {
	var b []byte
	if m.Note != nil && *m.Note == legacyRefused {
		return nil, errors.New("probeReqMarshalOnly: refused on encode")
	}
	if m.Name != nil {
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), *m.Name)
	}
	if m.Note != nil {
		b = protowire.AppendString(protowire.AppendTag(b, 2, protowire.BytesType), *m.Note)
	}
	return append(b, m.XXX_unrecognized...), nil
}

var _ protoadapt.MessageV1 = (*probeReqMarshalOnly)(nil)

// probeReqMarshalSize is probeReqMarshalOnly with a Size too, which
// protobuf does not call: it is still encoded by its Marshal.
type probeReqMarshalSize probeReqMarshalOnly

func (m *probeReqMarshalSize) Reset()                   { *m = probeReqMarshalSize{} }
func (m *probeReqMarshalSize) String() string           { return (*probeReqMarshalOnly)(m).String() }
func (*probeReqMarshalSize) ProtoMessage()              {}
func (m *probeReqMarshalSize) Marshal() ([]byte, error) { return (*probeReqMarshalOnly)(m).Marshal() }
func (m *probeReqMarshalSize) Size() int                { b, _ := m.Marshal(); return len(b) }

// probeReqPlain is probeReqMarshalOnly without coding methods: protobuf
// encodes and decodes it by reflection (a planned message in-process).
type probeReqPlain probeReqMarshalOnly

func (m *probeReqPlain) Reset()         { *m = probeReqPlain{} }
func (m *probeReqPlain) String() string { return (*probeReqMarshalOnly)(m).String() }
func (*probeReqPlain) ProtoMessage()    {}

// TestLegacyMarshalOnlyRequiredAsGRPC: a legacy message with a
// Marshal of its own (alone, or with a Size) whose required field is
// unset, or whose Marshal fails, sent each way; the commit sends these by
// their wire encoding, which must fail (or not) as grpc-go's send does.
func TestLegacyMarshalOnlyRequiredAsGRPC(t *testing.T) {
	name, refused := "n", legacyRefused
	cases := []struct {
		name string
		msg  func() any
	}{
		{"marshal-only/required-set", func() any { return &probeReqMarshalOnly{Name: &name} }},
		{"marshal-only/required-unset", func() any { return &probeReqMarshalOnly{Note: &name} }},
		{"marshal-only/marshal-fails", func() any { return &probeReqMarshalOnly{Name: &name, Note: &refused} }},
		{"plain/required-set", func() any { return &probeReqPlain{Name: &name} }},
		{"plain/required-unset", func() any { return &probeReqPlain{Note: &name} }},
		{"marshal+size/required-set", func() any { return &probeReqMarshalSize{Name: &name} }},
		{"marshal+size/required-unset", func() any { return &probeReqMarshalSize{Note: &name} }},
		{"marshal+size/marshal-fails", func() any { return &probeReqMarshalSize{Name: &name, Note: &refused} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			newIn := func() any { return c.msg() }
			probeRawAgree(t, func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &probeRawSvc{newIn: newIn, handle: func(in any) (any, error) {
					saw <- fmt.Sprint(in)
					return c.msg(), nil
				}}
				reply := newIn()
				req := c.msg()
				if err := serve(svc).Invoke(context.Background(), probeRawUnary, req, reply); err != nil {
					return probeErr(err)
				}
				return "handler: " + receive(t, saw, "the handler") + " | client: " + fmt.Sprint(reply)
			})
		})
	}
}
