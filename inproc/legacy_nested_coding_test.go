package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/protoadapt"
)

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
