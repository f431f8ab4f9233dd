package inproc_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/protoadapt"
)

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
