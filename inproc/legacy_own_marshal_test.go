package inproc_test

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/protoadapt"
)

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
