package inproc_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
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
