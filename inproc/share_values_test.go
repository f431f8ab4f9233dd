package inproc_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/envoyproxy/protoc-gen-validate/validate"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// nilShapes describes which of a received message's top-level reference
// fields are nil (and the sign of its zero floats), which is what a
// program that tests `x == nil` (or reflect.DeepEqual) sees.
func nilShapes(m proto.Message) string {
	switch m := m.(type) {
	case *open3.Leaf:
		return fmt.Sprintf("b nil=%v len=%d d=%v f=%v", m.B == nil, len(m.B), math.Signbit(m.D), math.Signbit(float64(m.F)))
	case *flat3.Rich:
		ob, isOb := m.Pick.(*flat3.Rich_Ob)
		return fmt.Sprintf("b nil=%v nums nil=%v kv nil=%v leaves nil=%v oneof bytes set=%v nil=%v", m.B == nil, m.Nums == nil, m.Kv == nil, m.Leaves == nil, isOb, isOb && ob.Ob == nil)
	case *flat3.Flat:
		return fmt.Sprintf("b nil=%v names nil=%v leaves nil=%v leaf.b nil=%v", m.B == nil, m.Names == nil, m.Leaves == nil, m.Leaf != nil && m.Leaf.B == nil)
	case *opaqueimplicit.Tree:
		return fmt.Sprintf("b nil=%v names nil=%v leaves nil=%v kv nil=%v", m.GetB() == nil, m.GetNames() == nil, m.GetLeaves() == nil, m.GetKv() == nil)
	case *open3.Tree:
		return fmt.Sprintf("names nil=%v leaves nil=%v by_name nil=%v ds nil=%v d signbit=%v optd=%v",
			m.Names == nil, m.Leaves == nil, m.ByName == nil, m.Ds == nil, math.Signbit(m.D), m.OptD != nil && math.Signbit(*m.OptD))
	}
	return "?"
}

// TestShareEmptyAndNegativeZeroValuesAsGRPC: fields set to empty but
// non-nil values (bytes, lists, maps, a oneof's nil bytes) and negative
// zeros, sent as a request and echoed back; a socket's receiver gets nil
// for each empty one (proto3 sends none of them), empty bytes for the
// oneof's (which it sends), and -0 for each -0. The handler and the
// client must see what they see over grpc-go.
func TestShareEmptyAndNegativeZeroValuesAsGRPC(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name string
		msg  func() proto.Message
	}{
		{"leaf/empty-bytes", func() proto.Message { return &open3.Leaf{S: "s", B: []byte{}, D: negZero, F: float32(negZero)} }},
		{"rich/oneof-nil-bytes", func() proto.Message {
			return &flat3.Rich{S: "s", B: []byte{}, Nums: []int32{}, Kv: map[string]string{}, Leaves: []*flat3.Leaf{}, Pick: &flat3.Rich_Ob{}}
		}},
		{"flat/empty", func() proto.Message {
			return &flat3.Flat{S: "s", B: []byte{}, Names: []string{}, Leaves: []*flat3.Leaf{}, Leaf: &flat3.Leaf{}}
		}},
		{"opaque/empty", func() proto.Message {
			return opaqueimplicit.Tree_builder{S: "s", B: []byte{}, Names: []string{}, Leaves: []*opaqueimplicit.Leaf{}, Kv: map[string]string{}}.Build()
		}},
		{"tree/empty-containers", func() proto.Message {
			return &open3.Tree{S: "s", Names: []string{}, Leaves: []*open3.Leaf{}, ByName: map[string]*open3.Leaf{}, Ds: []float64{}, D: negZero, OptD: &negZero}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &anySvc{newReq: func() proto.Message { return c.msg().ProtoReflect().New().Interface() }, resp: func(req proto.Message) (proto.Message, error) {
					saw <- nilShapes(req)
					return req, nil
				}}
				reply := c.msg().ProtoReflect().New().Interface()
				if err := serve(svc).Invoke(context.Background(), anyUnary, c.msg(), reply); err != nil {
					return err.Error()
				}
				return "handler: " + <-saw + " | client: " + nilShapes(reply)
			})
		})
	}
}

// TestNestedEmptyBytesByMode: a nested message's empty bytes. Over a
// socket the receiver gets nil, and so with Clone, whose copy is a
// socket's; with Share nested messages are the sender's as they are (see
// Share), so the handler's nested message is the very one the client
// sent, empty bytes and all.
func TestNestedEmptyBytesByMode(t *testing.T) {
	sent := &flat3.Leaf{B: []byte{}}
	var mu sync.Mutex
	var got *flat3.Leaf
	svc := &anySvc{newReq: func() proto.Message { return &flat3.Flat{} }, resp: func(req proto.Message) (proto.Message, error) {
		mu.Lock()
		got = req.(*flat3.Flat).Leaf
		mu.Unlock()
		return &flat3.Flat{}, nil
	}}
	call := func(t *testing.T, conn grpc.ClientConnInterface) *flat3.Leaf {
		t.Helper()
		if err := conn.Invoke(context.Background(), anyUnary, &flat3.Flat{S: "s", Leaf: sent}, &flat3.Flat{}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	if leaf := call(t, anyReference(t, svc)); leaf == nil || leaf.B != nil {
		t.Fatalf("grpc-go: the handler's nested message %v, want one with nil bytes", leaf)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc)
		leaf := call(t, ch)
		switch {
		case isShare(t, m) && leaf != sent:
			t.Errorf("Share: the handler's nested message is %p, not the one sent (%p)", leaf, sent)
		case !isShare(t, m) && (leaf == nil || leaf == sent || leaf.B != nil):
			t.Errorf("Clone: the handler's nested message %v (the one sent: %v), want a copy with nil bytes, as grpc-go gives", leaf, leaf == sent)
		}
	})
}

// probeBag is a legacy proto3 message (no ProtoReflect; protobuf-go
// derives its descriptor from the tags, and in-process it is a planned
// message, shared with Share) with the bytes shapes the zoo lacks: a map
// of bytes, repeated bytes, and a oneof with a bytes case.
type probeBag struct {
	S                string            `protobuf:"bytes,1,opt,name=s,proto3" json:"s,omitempty"`
	M                map[string][]byte `protobuf:"bytes,2,rep,name=m,proto3" json:"m,omitempty" protobuf_key:"bytes,1,opt,name=key,proto3" protobuf_val:"bytes,2,opt,name=value,proto3"`
	Rb               [][]byte          `protobuf:"bytes,3,rep,name=rb,proto3" json:"rb,omitempty"`
	Pick             isProbeBag_Pick   `protobuf_oneof:"pick"`
	XXX_unrecognized []byte            `json:"-"`
	XXX_sizecache    int32             `json:"-"`
}

type isProbeBag_Pick interface{ isProbeBag_Pick() }

type probeBag_Ob struct {
	Ob []byte `protobuf:"bytes,4,opt,name=ob,proto3,oneof"`
}
type probeBag_Os struct {
	Os string `protobuf:"bytes,5,opt,name=os,proto3,oneof"`
}

func (*probeBag_Ob) isProbeBag_Pick() {}
func (*probeBag_Os) isProbeBag_Pick() {}

func (m *probeBag) Reset()         { *m = probeBag{} }
func (m *probeBag) String() string { return probeBagShape(m) }
func (*probeBag) ProtoMessage()    {}
func (*probeBag) XXX_OneofWrappers() []any {
	return []any{(*probeBag_Ob)(nil), (*probeBag_Os)(nil)}
}

var _ protoadapt.MessageV1 = (*probeBag)(nil)

// probeRawSvc is a service whose unary handler receives into what newIn
// makes (a legacy message itself, not protobuf's wrapper of it, so that
// both sides hold the one Go type) and answers with what handle returns.
type probeRawSvc struct {
	newIn  func() any
	handle func(in any) (any, error)
}

var probeRawDesc = &grpc.ServiceDesc{
	ServiceName: "probe.Raw",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		s := srv.(*probeRawSvc)
		in := s.newIn()
		if err := dec(in); err != nil {
			return nil, err
		}
		return s.handle(in)
	}}},
}

const probeRawUnary = "/probe.Raw/Unary"

// probeRawAgree is anyAgree for probeRawSvc.
func probeRawAgree(t *testing.T, run func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string) string {
	t.Helper()
	want := run(t, func(s *probeRawSvc) grpc.ClientConnInterface {
		return realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(probeRawDesc, s) }, nil, nil)
	})
	forEachMode(t, func(t *testing.T, m testMode) {
		got := run(t, func(s *probeRawSvc) grpc.ClientConnInterface {
			ch := newChannel(t, m)
			ch.RegisterService(probeRawDesc, s)
			return ch
		})
		if got != want {
			t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
		}
	})
	return want
}

// probeErr is err as the tests compare it: its code and message.
func probeErr(err error) string {
	st := status.Convert(err)
	return fmt.Sprintf("code=%v msg=%q", st.Code(), st.Message())
}

// bytesShape says whether b is nil, and its contents.
func bytesShape(b []byte) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", b)
}

// probeBagShape describes m as a program that tests `== nil` sees it.
func probeBagShape(m *probeBag) string {
	var keys []string
	for k := range m.M {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv, rb []string
	for _, k := range keys {
		kv = append(kv, k+":"+bytesShape(m.M[k]))
	}
	for _, b := range m.Rb {
		rb = append(rb, bytesShape(b))
	}
	pick := "unset"
	switch p := m.Pick.(type) {
	case *probeBag_Ob:
		pick = "ob=" + bytesShape(p.Ob)
	case *probeBag_Os:
		pick = "os=" + p.Os
	}
	return fmt.Sprintf("m nil=%v {%s} rb nil=%v [%s] pick %s", m.M == nil, strings.Join(kv, " "), m.Rb == nil, strings.Join(rb, " "), pick)
}

// TestShareTopLevelBytesValuesAsGRPC: bytes that are values of a
// top-level map or elements of a top-level list are sent by protobuf even
// when nil or empty (a map entry always carries its value, a list each
// element), and a socket's receiver decodes each as empty and non-nil.
// Share's doc promises a top level whose "values are as a socket delivers
// them"; only nested messages are excepted.
func TestShareTopLevelBytesValuesAsGRPC(t *testing.T) {
	cases := []probeBagCase{
		{"map-of-bytes/nil-and-empty-values", func() *probeBag {
			return &probeBag{S: "s", M: map[string][]byte{"nil": nil, "empty": {}, "x": []byte("x")}}
		}},
		{"repeated-bytes/nil-and-empty-elements", func() *probeBag {
			return &probeBag{S: "s", Rb: [][]byte{nil, {}, []byte("x")}}
		}},
	}
	probeBagAgree(t, cases)
}

// TestShareLegacyOneofAndEmptiesAsGRPC: what the commit covers, for
// a legacy message (no ProtoReflect): a oneof's nil bytes arrive empty,
// its empty bytes empty, a typed nil wrapper unset, and an empty map and
// list nil.
func TestShareLegacyOneofAndEmptiesAsGRPC(t *testing.T) {
	probeBagAgree(t, []probeBagCase{
		{"oneof-nil-bytes+empty-containers", func() *probeBag {
			return &probeBag{S: "s", M: map[string][]byte{}, Rb: [][]byte{}, Pick: &probeBag_Ob{}}
		}},
		{"oneof-typed-nil", func() *probeBag { return &probeBag{S: "s", Pick: (*probeBag_Ob)(nil)} }},
		{"oneof-empty-bytes", func() *probeBag { return &probeBag{S: "s", Pick: &probeBag_Ob{Ob: []byte{}}} }},
	})
}

type probeBagCase struct {
	name string
	msg  func() *probeBag
}

// probeBagAgree sends each case's message as a request and as a reply,
// and compares what the handler and the client get with grpc-go's.
func probeBagAgree(t *testing.T, cases []probeBagCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probeRawAgree(t, func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &probeRawSvc{newIn: func() any { return &probeBag{} }, handle: func(in any) (any, error) {
					saw <- probeBagShape(in.(*probeBag))
					return c.msg(), nil
				}}
				reply := &probeBag{}
				if err := serve(svc).Invoke(context.Background(), probeRawUnary, c.msg(), reply); err != nil {
					return probeErr(err)
				}
				return "handler: " + receive(t, saw, "the handler") + " | client: " + probeBagShape(reply)
			})
		})
	}
}

// validateCase is a BytesRules to send.
type validateCase struct {
	name string
	msg  func() *validate.BytesRules
}

// TestShareGeneratedRepeatedBytesAsGRPC: a generated proto2 message
// (protoc-gen-validate's BytesRules) with repeated bytes holding a nil
// element: protobuf sends every element, and a socket's receiver gets an
// empty, non-nil one. With Share the top-level list is clipped but its
// elements are the sender's, so the nil stays nil.
func TestShareGeneratedRepeatedBytesAsGRPC(t *testing.T) {
	validateAgree(t, []validateCase{
		{"repeated-nil-element", func() *validate.BytesRules {
			return &validate.BytesRules{Const: []byte("c"), In: [][]byte{nil, {}, []byte("x")}}
		}},
	})
}

// TestShareProto2OptionalEmptyBytesAsGRPC: proto2 optional bytes set
// to empty has presence, is sent, and arrives empty and non-nil; an empty
// repeated bytes arrives nil.
func TestShareProto2OptionalEmptyBytesAsGRPC(t *testing.T) {
	validateAgree(t, []validateCase{
		{"optional-empty", func() *validate.BytesRules {
			return &validate.BytesRules{Const: []byte{}, NotIn: [][]byte{}}
		}},
	})
}

// validateAgree sends each case both ways, as probeBagAgree.
func validateAgree(t *testing.T, cases []validateCase) {
	t.Helper()
	shape := func(m *validate.BytesRules) string {
		var in []string
		for _, b := range m.In {
			in = append(in, bytesShape(b))
		}
		return fmt.Sprintf("const=%s has=%v prefix=%s in nil=%v [%s] not_in nil=%v", bytesShape(m.Const), m.Const != nil, bytesShape(m.Prefix), m.In == nil, strings.Join(in, " "), m.NotIn == nil)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &anySvc{newReq: func() proto.Message { return &validate.BytesRules{} }, resp: func(req proto.Message) (proto.Message, error) {
					saw <- shape(req.(*validate.BytesRules))
					return c.msg(), nil
				}}
				reply := &validate.BytesRules{}
				if err := serve(svc).Invoke(context.Background(), anyUnary, c.msg(), reply); err != nil {
					return err.Error()
				}
				return "handler: " + receive(t, saw, "the handler") + " | client: " + shape(reply)
			})
		})
	}
}

// TestShareMapBytesValueAppend: the handler appends to a bytes value
// of its request's map and stores the result back in its map (its own,
// Share says: "maps a copy of their own"), as plain Go allows. Over a
// socket the client's message never changes. Share clips a top-level
// bytes field's capacity so that an append reallocates; a map's bytes
// values are top-level values too, but keep the sender's capacity, so
// the append writes into the client's array (here: its other value).
func TestShareMapBytesValueAppend(t *testing.T) {
	msg := func() *probeBag {
		buf := []byte("aaabbb")
		return &probeBag{S: "s", M: map[string][]byte{"a": buf[:3], "b": buf[3:6]}}
	}
	svc := &probeRawSvc{newIn: func() any { return &probeBag{} }, handle: func(in any) (any, error) {
		m := in.(*probeBag)
		m.M["a"] = append(m.M["a"], 'X')
		return &probeBag{}, nil
	}}
	grpcgo := probeRawAgree(t, func(t *testing.T, serve func(*probeRawSvc) grpc.ClientConnInterface) string {
		req := msg()
		before := probeBagShape(req)
		if err := serve(svc).Invoke(context.Background(), probeRawUnary, req, &probeBag{}); err != nil {
			return probeErr(err)
		}
		if after := probeBagShape(req); after != before {
			return "the handler's append reached the client's message: " + after + ", sent " + before
		}
		return "unchanged"
	})
	if grpcgo != "unchanged" {
		t.Errorf("grpc-go: %s", grpcgo)
	}
}
