package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// probeShape describes m's top level as Go code sees it (nil or not, for
// every reference field, and the nil-ness of map values and list
// elements) and its content as text.
func probeShape(m proto.Message) string {
	var s string
	switch m := m.(type) {
	case *open3.Tree:
		var bn []string
		for _, k := range sortedKeys(m.ByName) {
			bn = append(bn, fmt.Sprintf("%s:nil=%v", k, m.ByName[k] == nil))
		}
		var lv []string
		for _, l := range m.Leaves {
			lv = append(lv, fmt.Sprint(l == nil))
		}
		ch := "nil"
		switch c := m.Choice.(type) {
		case *open3.Tree_Ol:
			ch = fmt.Sprintf("ol nil=%v", c == nil || c.Ol == nil)
		case *open3.Tree_Od:
			ch = fmt.Sprintf("od typed-nil=%v", c == nil)
		}
		s = fmt.Sprintf("by_name nil=%v {%s} leaves nil=%v %v names nil=%v choice %s leaf nil=%v optd nil=%v child nil=%v",
			m.ByName == nil, strings.Join(bn, " "), m.Leaves == nil, lv, m.Names == nil, ch, m.Leaf == nil, m.OptD == nil, m.Child == nil)
	case *flat3.Rich:
		s = fmt.Sprintf("kv nil=%v nums nil=%v b nil=%v leaves nil=%v pick %T opt nil=%v", m.Kv == nil, m.Nums == nil, m.B == nil, m.Leaves == nil, m.Pick, m.Opt == nil)
		if ob, ok := m.Pick.(*flat3.Rich_Ob); ok && ob != nil {
			s += fmt.Sprintf(" ob nil=%v", ob.Ob == nil)
		}
	case *opaqueimplicit.Tree:
		s = fmt.Sprintf("kv nil=%v b nil=%v names nil=%v leaves nil=%v leaf nil=%v", m.GetKv() == nil, m.GetB() == nil, m.GetNames() == nil, m.GetLeaves() == nil, m.GetLeaf() == nil)
	case *editions.Holder:
		s = fmt.Sprintf("kids nil=%v names nil=%v more nil=%v", m.Kids == nil, m.Names == nil, m.More == nil)
	case *editions.Node:
		s = fmt.Sprintf("data nil=%v tags nil=%v kids nil=%v", m.Data == nil, m.Tags == nil, m.Kids == nil)
	case *hybrid.Node:
		s = fmt.Sprintf("data nil=%v has=%v tags nil=%v kids nil=%v", m.Data == nil, m.HasData(), m.Tags == nil, m.Kids == nil)
	case *vtclone.Rich:
		s = fmt.Sprintf("kv nil=%v nums nil=%v b nil=%v leaves nil=%v pick %T", m.Kv == nil, m.Nums == nil, m.B == nil, m.Leaves == nil, m.Pick)
	}
	return s + " | " + prototext.MarshalOptions{}.Format(m)
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

type probeReuseCase struct {
	name  string
	sent  func() proto.Message // what the sender sends
	stale func() proto.Message // the receiver's message before it receives
}

func probeReuseCases() []probeReuseCase {
	negZero := math.Copysign(0, -1)
	one := 1.0
	staleTree := func() proto.Message {
		return &open3.Tree{S: "stale", ByName: map[string]*open3.Leaf{"old": {S: "o"}}, Names: []string{"old"}, Leaves: []*open3.Leaf{{S: "o"}},
			Choice: &open3.Tree_Od{Od: 1}, OptD: &one, Leaf: &open3.Leaf{S: "o"}, Child: &open3.Tree{S: "o"}, Ds: []float64{1}}
	}
	return []probeReuseCase{
		{"open3/new-over-stale", func() proto.Message { return &open3.Tree{S: "new", D: negZero} }, staleTree},
		{"open3/empty-containers-over-stale", func() proto.Message {
			return &open3.Tree{S: "new", ByName: map[string]*open3.Leaf{}, Names: []string{}, Leaves: []*open3.Leaf{}, Ds: []float64{}}
		}, staleTree},
		{"open3/nil-message-map-value", func() proto.Message {
			return &open3.Tree{S: "new", ByName: map[string]*open3.Leaf{"nil": nil, "x": {S: "x"}}}
		}, staleTree},
		{"open3/nil-message-list-element", func() proto.Message {
			return &open3.Tree{S: "new", Leaves: []*open3.Leaf{nil, {S: "x"}}}
		}, staleTree},
		{"open3/oneof-nil-message", func() proto.Message { return &open3.Tree{S: "new", Choice: &open3.Tree_Ol{}} }, staleTree},
		{"open3/oneof-typed-nil-over-stale", func() proto.Message { return &open3.Tree{S: "new", Choice: (*open3.Tree_Ol)(nil)} }, staleTree},
		{"flat3/oneof-nil-bytes-over-stale", func() proto.Message { return &flat3.Rich{S: "new", Pick: &flat3.Rich_Ob{}} }, func() proto.Message {
			o := "o"
			return &flat3.Rich{S: "stale", Kv: map[string]string{"o": "o"}, Pick: &flat3.Rich_Os{Os: "o"}, Nums: []int32{1}, B: []byte("o"), Opt: &o}
		}},
		{"flat3/oneof-empty-bytes", func() proto.Message { return &flat3.Rich{S: "new", Pick: &flat3.Rich_Ob{Ob: []byte{}}} }, func() proto.Message { return &flat3.Rich{} }},
		{"opaque/new-over-stale", func() proto.Message { return opaqueimplicit.Tree_builder{S: "new", Kv: map[string]string{}}.Build() }, func() proto.Message {
			return opaqueimplicit.Tree_builder{S: "stale", B: []byte("o"), Names: []string{"o"}, Leaves: []*opaqueimplicit.Leaf{opaqueimplicit.Leaf_builder{S: "o"}.Build()}, Kv: map[string]string{"o": "o"}}.Build()
		}},
		{"vtclone/oneof-typed-nil-over-stale", func() proto.Message { return &vtclone.Rich{S: "new", Pick: (*vtclone.Rich_Ol)(nil)} }, func() proto.Message {
			return &vtclone.Rich{S: "stale", Kv: map[string]string{"o": "o"}, Pick: &vtclone.Rich_Os{Os: "o"}}
		}},
		{"editions/explicit-empty-bytes-over-stale", func() proto.Message {
			return &editions.Node{Label: proto.String("new"), Data: []byte{}, Tags: []string{}}
		}, func() proto.Message {
			return &editions.Node{Label: proto.String("stale"), Data: []byte("o"), Tags: []string{"o"}, Kids: []*editions.Node{{}}}
		}},
		{"hybrid/explicit-empty-bytes-over-stale", func() proto.Message {
			return hybrid.Node_builder{Label: proto.String("new"), Data: []byte{}, Tags: []string{}}.Build()
		}, func() proto.Message {
			return hybrid.Node_builder{Label: proto.String("stale"), Data: []byte("o"), Tags: []string{"o"}}.Build()
		}},
		{"editions/empty-over-stale", func() proto.Message {
			return &editions.Holder{S: proto.String("new"), Kids: []*editions.Node{}, Names: []string{}}
		}, func() proto.Message {
			return &editions.Holder{S: proto.String("stale"), Kids: []*editions.Node{{Label: proto.String("o")}}, Names: []string{"o"}}
		}},
	}
}

// TestShareIntoReusedMessage: the receiver's message already holds
// values (a client that reuses its reply, a stream's receiver that reuses
// one message for every RecvMsg): over grpc-go Unmarshal resets it first,
// so nothing of it survives. Each case is sent as a unary reply into a
// stale reply and by a bidi stream into one stale message, in every mode
// and with a CallCopy that overrides the channel's mode.
func TestShareIntoReusedMessage(t *testing.T) {
	for _, c := range probeReuseCases() {
		t.Run(c.name, func(t *testing.T) {
			run := func(t *testing.T, cc grpc.ClientConnInterface, opts ...grpc.CallOption) string {
				reply := c.stale()
				if err := cc.Invoke(context.Background(), anyUnary, c.sent(), reply, opts...); err != nil {
					return "unary: " + err.Error()
				}
				out := "unary: " + probeShape(reply)
				ctx, cancel := context.WithCancel(timeoutCtx(t))
				defer cancel()
				s, err := cc.NewStream(ctx, anyBidiDesc, anyBidi, opts...)
				if err != nil {
					return out + " stream: " + err.Error()
				}
				if err := s.SendMsg(c.sent()); err != nil {
					return out + " send: " + err.Error()
				}
				if err := s.CloseSend(); err != nil {
					return out + " closesend: " + err.Error()
				}
				in := c.stale()
				for {
					if err := s.RecvMsg(in); err != nil {
						if !errors.Is(err, io.EOF) {
							out += " recv: " + err.Error()
						}
						break
					}
					out += " || stream: " + probeShape(in)
				}
				return out
			}
			newSvc := func() *anySvc {
				return &anySvc{
					newReq: func() proto.Message { return c.sent().ProtoReflect().New().Interface() },
					resp:   func(proto.Message) (proto.Message, error) { return c.sent(), nil },
					bidi: func(ss grpc.ServerStream) error {
						in := c.stale()
						for {
							if err := ss.RecvMsg(in); err != nil {
								if errors.Is(err, io.EOF) {
									return nil
								}
								return err
							}
							// The handler's stale message, then what it got,
							// then a fresh message back twice.
							if err := ss.SendMsg(in); err != nil {
								return err
							}
							if err := ss.SendMsg(c.sent()); err != nil {
								return err
							}
						}
					},
				}
			}
			want := run(t, anyReference(t, newSvc()))
			forEachMode(t, func(t *testing.T, m testMode) {
				for _, mode := range []inproc.CopyMode{inproc.Clone, inproc.Share} {
					ch := newChannel(t, m)
					ch.RegisterService(anyDesc, newSvc())
					if got := run(t, ch, inproc.CallCopy(mode)); got != want {
						t.Errorf("CallCopy(%v):\ninproc:  %s\ngrpc-go: %s", mode, got, want)
					}
				}
			})
		})
	}
}

// TestShareOpaqueMapIsTheReceivers: the opaque API keeps a map in an
// unexported field, which Share copies by reflection; the handler writes
// into the map its getter returns, and the client writes into its reply's,
// while each side's sender keeps its own message: over grpc-go neither
// write reaches the other side.
func TestShareOpaqueMapIsTheReceivers(t *testing.T) {
	grpcgo := anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
		cached := opaqueimplicit.Tree_builder{S: "handler's", Kv: map[string]string{"h": "h"}}.Build()
		cc := serve(&anySvc{newReq: func() proto.Message { return &opaqueimplicit.Tree{} }, resp: func(req proto.Message) (proto.Message, error) {
			req.(*opaqueimplicit.Tree).GetKv()["written"] = "by the handler"
			return cached, nil
		}})
		req := opaqueimplicit.Tree_builder{S: "client's", Kv: map[string]string{"c": "c"}}.Build()
		for range 3 {
			reply := &opaqueimplicit.Tree{}
			if err := cc.Invoke(context.Background(), anyUnary, req, reply); err != nil {
				return err.Error()
			}
			reply.GetKv()["written"] = "by the client"
		}
		return fmt.Sprintf("client's %v, handler's %v", req.GetKv(), cached.GetKv())
	})
	if want := "client's map[c:c], handler's map[h:h]"; grpcgo != want {
		t.Errorf("grpc-go: %s, want %s", grpcgo, want)
	}
}
