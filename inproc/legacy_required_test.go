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
