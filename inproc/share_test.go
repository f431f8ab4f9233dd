package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// TestShareImmutableResponse: a handler that answers every call with
// one prebuilt response that nobody ever modifies, a common pattern, safe
// over grpc-go (Marshal only reads the message; its size cache is written
// atomically). With Share, inproc's send calls proto.Size on it, which
// stores the message's sizeCache atomically, while another call's receive
// copies the same struct with a plain read (shallowCopy's
// dv.Elem().Set(sv.Elem())): a data race on a message that nobody changes.
func TestShareImmutableResponse(t *testing.T) {
	cached := &echov1.EchoResponse{Text: "the same answer for everybody"}
	srv := &funcEcho{get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		return cached, nil
	}}
	for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
		t.Run(exec.String(), func(t *testing.T) {
			ch := inproc.New(inproc.WithCopy(inproc.Share), inproc.WithExecution(exec))
			t.Cleanup(ch.Stop)
			echov1.RegisterEchoServer(ch, srv)
			c := echov1.NewEchoClient(ch)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 200 {
						r, err := c.Get(t.Context(), &echov1.EchoRequest{})
						if err != nil || r.GetText() != cached.Text {
							t.Errorf("Get: %v, %v", r, err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

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

// TestShareHandlerMapWriteWhileClientReads: the handler adds to a map
// of its request (plain Go) while the client reads its own message,
// which it may, since sending does not change it. Over grpc-go nothing
// is shared. With Share the map is the client's: the runtime may stop
// the process ("concurrent map read and map write"), and the race
// detector reports a race. Each mode runs in a child process, so that a
// crash is a failure, not the end of the test binary.
func TestShareHandlerMapWriteWhileClientReads(t *testing.T) {
	if os.Getenv("INPROC_SHARE_MAP_CHILD") != "" {
		t.Skip("child")
	}
	if err := mapWritesWhileClientReads(anyReference(t, mapWritingSvc())); err != nil {
		t.Fatalf("grpc-go: %v", err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestShareHandlerMapWriteChild$", "-test.count=1")
			// (The race detector sleeps a second at exit unless told not to.)
			cmd.Env = append(os.Environ(), "INPROC_SHARE_MAP_CHILD="+m.name, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				lines := crashLines(out)
				if lines == "" {
					lines = lastLines(out, 6)
				}
				t.Errorf("grpc-go OK, inproc child failed (%v):\n%s", err, lines)
			}
		})
	}
}

// TestShareHandlerMapWriteChild is the child process of
// TestShareHandlerMapWriteWhileClientReads: mapWritesWhileClientReads in
// the mode INPROC_SHARE_MAP_CHILD names.
func TestShareHandlerMapWriteChild(t *testing.T) {
	name := os.Getenv("INPROC_SHARE_MAP_CHILD")
	if name == "" {
		t.Skip("run by TestShareHandlerMapWriteWhileClientReads")
	}
	for _, m := range modes {
		if m.name == name {
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, mapWritingSvc())
			if err := mapWritesWhileClientReads(ch); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no mode %q", name)
}

// mapWritingSvc's handler writes into its request's map.
func mapWritingSvc() *anySvc {
	return &anySvc{newReq: func() proto.Message { return &open3.Tree{} }, resp: func(req proto.Message) (proto.Message, error) {
		tr := req.(*open3.Tree)
		if tr.ByName == nil {
			tr.ByName = map[string]*open3.Leaf{}
		}
		for i := range 50 {
			tr.ByName[fmt.Sprint("h", i)] = &open3.Leaf{}
		}
		return &emptypb.Empty{}, nil
	}}
}

// mapWritesWhileClientReads makes unary calls to mapWritingSvc while the
// client reads its own request, and fails if the client's map changed.
func mapWritesWhileClientReads(cc grpc.ClientConnInterface) error {
	req := &open3.Tree{ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
	stop := meanwhileRead(func() {
		for k := range req.ByName {
			_ = k
		}
		_ = req.ByName["client"]
	})
	defer stop()
	for range 50 {
		if err := cc.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
			return err
		}
	}
	if len(req.ByName) != 1 {
		return fmt.Errorf("the client's map holds %d entries, sent with 1", len(req.ByName))
	}
	return nil
}

// lastLines returns the last n lines of out.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// topLevelContainerChange is a change a receiver makes to a container at
// the top level of its message (a map, a list, the extension map) through
// protobuf's API or plain Go, and how the test reads the sender's message
// afterwards.
type topLevelContainerChange struct {
	name   string
	msg    func() proto.Message
	change func(req proto.Message)
	read   func(m proto.Message) string
}

func topLevelContainerChanges() []topLevelContainerChange {
	byName := oracleField(&open3.Tree{}, "by_name")
	readTree := func(m proto.Message) string {
		tr := m.(*open3.Tree)
		var keys []string
		for k := range tr.ByName {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("by_name=%v names=%q", keys, tr.Names)
	}
	return []topLevelContainerChange{
		{"proto2/cleared-extension/set-extension", func() proto.Message {
			m := &proto2.Record{Name: proto.String("client's")}
			proto.SetExtension(m, proto2.E_Note, "client's")
			proto.ClearExtension(m, proto2.E_Note)
			return m
		}, func(req proto.Message) {
			proto.SetExtension(req, proto2.E_Note, "handler's")
		}, func(m proto.Message) string {
			return fmt.Sprintf("has note=%v", proto.HasExtension(m, proto2.E_Note))
		}},
		{"proto3/map/plain-go", func() proto.Message {
			return &open3.Tree{S: "client's", ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
		}, func(req proto.Message) {
			req.(*open3.Tree).ByName["handler"] = &open3.Leaf{S: "h"}
		}, readTree},
		{"proto3/map/merge", func() proto.Message {
			return &open3.Tree{S: "client's", ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
		}, func(req proto.Message) {
			proto.Merge(req, &open3.Tree{ByName: map[string]*open3.Leaf{"handler": {S: "h"}}})
		}, readTree},
		{"proto3/map/reflect-set", func() proto.Message {
			return &open3.Tree{S: "client's", ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
		}, func(req proto.Message) {
			req.ProtoReflect().Mutable(byName).Map().Set(protoreflect.ValueOfString("handler").MapKey(), protoreflect.ValueOfMessage((&open3.Leaf{S: "h"}).ProtoReflect()))
		}, readTree},
		{"proto3/map/merging-unmarshal", func() proto.Message {
			return &open3.Tree{S: "client's", ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
		}, func(req proto.Message) {
			entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "handler")
			b := protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), entry)
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, req); err != nil {
				panic(err)
			}
		}, readTree},
		{"proto3/map/delete", func() proto.Message {
			return &open3.Tree{S: "client's", ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
		}, func(req proto.Message) {
			delete(req.(*open3.Tree).ByName, "client")
		}, readTree},
		{"proto3/empty-map/merge", func() proto.Message {
			return &open3.Tree{S: "client's", ByName: map[string]*open3.Leaf{}}
		}, func(req proto.Message) {
			proto.Merge(req, &open3.Tree{ByName: map[string]*open3.Leaf{"handler": {S: "h"}}})
		}, readTree},
		{"proto3/list/merge", func() proto.Message {
			return &open3.Tree{S: "client's", Names: append(make([]string, 0, 8), "client")}
		}, func(req proto.Message) {
			proto.Merge(req, &open3.Tree{Names: []string{"handler"}})
		}, readTree},
	}
}

// TestShareRequestTopLevelContainersAreTheHandlers: a handler changes
// the top-level containers of its request (a map field, an empty map, a
// list, an extension map the client emptied) through protobuf's API or
// plain Go while the client keeps its message; over grpc-go the client's
// message never changes. Share's rule lets a receiver set its fields and
// change its maps: none of these write into what the sender holds.
func TestShareRequestTopLevelContainersAreTheHandlers(t *testing.T) {
	for _, c := range topLevelContainerChanges() {
		t.Run(c.name, func(t *testing.T) {
			svc := changingSvc(c.msg, c.change)
			grpcgo := anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				cc := serve(svc)
				req := c.msg()
				before := c.read(req)
				for range 3 {
					if err := cc.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
						return "error " + err.Error()
					}
				}
				if after := c.read(req); after != before {
					return fmt.Sprintf("the handler's change reached the client's message: %s, sent %s", after, before)
				}
				return "unchanged"
			})
			if grpcgo != "unchanged" {
				t.Errorf("grpc-go: %s", grpcgo)
			}
		})
	}
}

// TestShareReplyTopLevelContainersAreTheClients is
// TestShareRequestTopLevelContainersAreTheHandlers the other way: the
// handler answers every call with one cached response, which it only
// reads, and the client changes the top level of each reply it gets; the
// cached response must stay as it was, as over grpc-go.
func TestShareReplyTopLevelContainersAreTheClients(t *testing.T) {
	for _, c := range topLevelContainerChanges() {
		t.Run(c.name, func(t *testing.T) {
			grpcgo := anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				cached := c.msg()
				cc := serve(&anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }, resp: func(proto.Message) (proto.Message, error) {
					return cached, nil
				}})
				before := c.read(cached)
				for range 3 {
					reply := c.msg().ProtoReflect().New().Interface()
					if err := cc.Invoke(context.Background(), anyUnary, &emptypb.Empty{}, reply); err != nil {
						return "error " + err.Error()
					}
					if err := catch(func() error { c.change(reply); return nil }); err != nil {
						return err.Error()
					}
				}
				if after := c.read(cached); after != before {
					return fmt.Sprintf("the client's change reached the handler's cached response: %s, was %s", after, before)
				}
				return "unchanged"
			})
			if grpcgo != "unchanged" {
				t.Errorf("grpc-go: %s", grpcgo)
			}
		})
	}
}

// sliceIdiom is something a receiver does to a field of the top level of
// its message, a list, bytes or a message, through plain Go or
// protobuf's API, and whether it writes into what the field holds, which
// Share's rule forbids: that is the sender's.
type sliceIdiom struct {
	name string
	msg  func() proto.Message
	// change makes the idiom's change to m, a message received.
	change func(m proto.Message)
	read   func(m proto.Message) string
	// intoHeld: the idiom writes into what the field held when received:
	// the elements of a list or bytes (a reslice to [:0] and an append, a
	// store to an element, protobuf's List().Truncate then Append, or
	// List().Set), or a nested message (a merge into a message field that
	// is set).
	intoHeld bool
}

func sliceIdioms() []sliceIdiom {
	filterNames := func(names []string) []string {
		out := names[:0]
		for _, n := range names {
			if strings.HasPrefix(n, "keep") {
				out = append(out, n)
			}
		}
		return out
	}
	tree := func() proto.Message {
		return &open3.Tree{S: "client's", Names: []string{"drop1", "keep1", "drop2", "keep2"}, Ds: []float64{1, 2}, Leaf: &open3.Leaf{S: "client's leaf"}}
	}
	treeWithoutLeaf := func() proto.Message { return &open3.Tree{S: "client's"} }
	readTree := func(m proto.Message) string {
		tr := m.(*open3.Tree)
		return fmt.Sprintf("names=%q ds=%v leaf=%q", tr.Names, tr.Ds, tr.GetLeaf().GetS())
	}
	mergeLeaf := func(m proto.Message) {
		proto.Merge(m, &open3.Tree{Leaf: &open3.Leaf{S: "handler's leaf"}})
	}
	leaf := func() proto.Message { return &open3.Leaf{S: "client's", B: []byte("client's bytes")} }
	readLeaf := func(m proto.Message) string { return fmt.Sprintf("b=%q", m.(*open3.Leaf).B) }
	flat := func() proto.Message {
		return &vtclone.Flat{S: "client's", B: []byte("client's bytes"), Names: []string{"drop1", "keep1", "drop2", "keep2"}}
	}
	readFlat := func(m proto.Message) string {
		return fmt.Sprintf("names=%q b=%q", m.(*vtclone.Flat).Names, m.(*vtclone.Flat).B)
	}
	opaqueHolder := func() proto.Message {
		return opaque.Holder_builder{S: proto.String("client's"), Names: []string{"drop1", "keep1", "drop2", "keep2"}}.Build()
	}
	readOpaque := func(m proto.Message) string { return fmt.Sprintf("names=%q", m.(*opaque.Holder).GetNames()) }
	hybridHolder := func() proto.Message {
		return &hybrid.Holder{S: proto.String("client's"), Names: []string{"drop1", "keep1", "drop2", "keep2"}}
	}
	readHybrid := func(m proto.Message) string { return fmt.Sprintf("names=%q", m.(*hybrid.Holder).Names) }
	// list is the protobuf List of m's field name, to change.
	list := func(m proto.Message, name protoreflect.Name) protoreflect.List {
		r := m.ProtoReflect()
		return r.Mutable(r.Descriptor().Fields().ByName(name)).List()
	}
	return []sliceIdiom{
		{"open3/names/in-place-filter", tree, func(m proto.Message) {
			m.(*open3.Tree).Names = filterNames(m.(*open3.Tree).Names)
		}, readTree, true},
		{"open3/names/store-element", tree, func(m proto.Message) {
			m.(*open3.Tree).Names[0] = "handler's"
		}, readTree, true},
		{"open3/names/list-truncate-append", tree, func(m proto.Message) {
			l := list(m, "names")
			l.Truncate(0)
			l.Append(protoreflect.ValueOfString("handler's"))
		}, readTree, true},
		{"open3/names/list-set", tree, func(m proto.Message) {
			list(m, "names").Set(0, protoreflect.ValueOfString("handler's"))
		}, readTree, true},
		{"open3/ds/reuse", tree, func(m proto.Message) {
			m.(*open3.Tree).Ds = append(m.(*open3.Tree).Ds[:0], 9)
		}, readTree, true},
		{"open3/names/append", tree, func(m proto.Message) {
			m.(*open3.Tree).Names = append(m.(*open3.Tree).Names, "handler's")
		}, readTree, false},
		{"open3/names/list-append", tree, func(m proto.Message) {
			list(m, "names").Append(protoreflect.ValueOfString("handler's"))
		}, readTree, false},
		{"open3/names/assign", tree, func(m proto.Message) {
			m.(*open3.Tree).Names = []string{"handler's"}
		}, readTree, false},
		{"open3/names/merge", tree, func(m proto.Message) {
			proto.Merge(m, &open3.Tree{Names: []string{"handler's"}})
		}, readTree, false},
		{"open3/leaf/merge", tree, mergeLeaf, readTree, true},
		{"open3/leaf/merging-unmarshal", tree, func(m proto.Message) {
			b, err := proto.Marshal(&open3.Tree{Leaf: &open3.Leaf{S: "handler's leaf"}})
			if err == nil {
				err = proto.UnmarshalOptions{Merge: true}.Unmarshal(b, m)
			}
			if err != nil {
				panic(err)
			}
		}, readTree, true},
		{"open3/unset-leaf/merge", treeWithoutLeaf, mergeLeaf, readTree, false},
		{"open3/leaf/assign", tree, func(m proto.Message) {
			m.(*open3.Tree).Leaf = &open3.Leaf{S: "handler's leaf"}
		}, readTree, false},
		{"open3/bytes/reuse", leaf, func(m proto.Message) {
			m.(*open3.Leaf).B = append(m.(*open3.Leaf).B[:0], "handler"...)
		}, readLeaf, true},
		{"open3/bytes/store-element", leaf, func(m proto.Message) {
			m.(*open3.Leaf).B[0] = 'H'
		}, readLeaf, true},
		{"open3/bytes/append", leaf, func(m proto.Message) {
			m.(*open3.Leaf).B = append(m.(*open3.Leaf).B, " and the handler's"...)
		}, readLeaf, false},
		{"vtproto/names/in-place-filter", flat, func(m proto.Message) {
			m.(*vtclone.Flat).Names = filterNames(m.(*vtclone.Flat).Names)
		}, readFlat, true},
		{"vtproto/bytes/reuse", flat, func(m proto.Message) {
			m.(*vtclone.Flat).B = append(m.(*vtclone.Flat).B[:0], "handler"...)
		}, readFlat, true},
		{"hybrid/names/in-place-filter", hybridHolder, func(m proto.Message) {
			m.(*hybrid.Holder).Names = filterNames(m.(*hybrid.Holder).Names)
		}, readHybrid, true},
		{"opaque/names/set-filtered", opaqueHolder, func(m proto.Message) {
			m.(*opaque.Holder).SetNames(filterNames(m.(*opaque.Holder).GetNames()))
		}, readOpaque, true},
		{"opaque/names/list-truncate-append", opaqueHolder, func(m proto.Message) {
			l := list(m, "names")
			l.Truncate(0)
			l.Append(protoreflect.ValueOfString("handler's"))
		}, readOpaque, true},
		{"opaque/names/set-appended", opaqueHolder, func(m proto.Message) {
			m.(*opaque.Holder).SetNames(append(m.(*opaque.Holder).GetNames(), "handler's"))
		}, readOpaque, false},
	}
}

// TestShareSliceIdioms checks Share's rule for lists, bytes and message
// fields, in both directions, against grpc-go: a receiver that appends to
// a list or bytes field, assigns a field, or merges lists and unset
// messages into it leaves the sender's message as it was, in every mode,
// as over a socket; one that writes into what a field held (the in-place
// filter out := l[:0]; out = append(out, x), buffer reuse
// b = append(b[:0], ...), a store to an element, protobuf's
// List().Truncate then Append, or List().Set, a merge into a message
// field that is set) changes the sender's message with Share, as the
// rule says, and with Clone does not.
func TestShareSliceIdioms(t *testing.T) {
	for _, c := range sliceIdioms() {
		t.Run(c.name, func(t *testing.T) {
			for _, dir := range []string{"request", "reply"} {
				t.Run(dir, func(t *testing.T) {
					run := func(t *testing.T, cc grpc.ClientConnInterface, sent proto.Message) string {
						before := c.read(sent)
						if dir == "request" {
							if err := cc.Invoke(context.Background(), anyUnary, sent, &emptypb.Empty{}); err != nil {
								return "error " + err.Error()
							}
						} else {
							reply := c.msg().ProtoReflect().New().Interface()
							if err := cc.Invoke(context.Background(), anyUnary, &emptypb.Empty{}, reply); err != nil {
								return "error " + err.Error()
							}
							c.change(reply)
						}
						if after := c.read(sent); after != before {
							return "changed"
						}
						return "unchanged"
					}
					svc := func(sent proto.Message) *anySvc {
						if dir == "request" {
							return changingSvc(c.msg, c.change)
						}
						return &anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }, resp: func(proto.Message) (proto.Message, error) {
							return sent, nil
						}}
					}
					sent := c.msg()
					if got := run(t, anyReference(t, svc(sent)), sent); got != "unchanged" {
						t.Fatalf("grpc-go: %s", got)
					}
					forEachMode(t, func(t *testing.T, m testMode) {
						sent := c.msg()
						ch := newChannel(t, m)
						ch.RegisterService(anyDesc, svc(sent))
						// Only Share shares the elements, and only an
						// idiom that writes into them reaches the sender.
						want := "unchanged"
						if c.intoHeld && isShare(t, m) {
							want = "changed"
						}
						if got := run(t, ch, sent); got != want {
							t.Errorf("the sender's message %s, want %s (%s idiom writes into what a field holds: %v)", got, want, dir, c.intoHeld)
						}
					})
				})
			}
		})
	}
}

// attack5: Share copy mode. The doc says a receiver may set its
// message's fields (plain Go or protobuf's API, presence boxes and oneof
// wrappers being its own), append to lists and bytes, change maps,
// proto.Merge/merging Unmarshal where no set message field is merged
// into, and the sender's message stays untouched. Over grpc-go (the
// oracle) nothing is shared, so every one of these leaves the sender's
// message as it was and races with nothing. Each case runs in both
// directions (request: the handler mutates; response: the client
// mutates), with a goroutine of the sender reading its message while the
// receiver mutates, so -race sees any sharing.

type a5ShareCase struct {
	name   string
	build  func() proto.Message
	mutate func(t *testing.T, m proto.Message)
}

func a5Tree() proto.Message {
	return &open3.Tree{
		D: 1, F: 2, S: "s",
		Leaf:   &open3.Leaf{D: 3, S: "leaf", B: []byte("leafb")},
		Leaves: []*open3.Leaf{{S: "l0", B: []byte("b0")}, {S: "l1"}},
		ByName: map[string]*open3.Leaf{"a": {S: "A"}, "b": {S: "B"}},
		Choice: &open3.Tree_Od{Od: 7},
		Child:  &open3.Tree{S: "child", Names: []string{"cn"}},
		Names:  []string{"n0", "n1", "n2"},
		OptD:   proto.Float64(11),
		Ds:     []float64{1, 2, 3},
	}
}

func a5TreeOl() proto.Message {
	m := a5Tree().(*open3.Tree)
	m.Choice = &open3.Tree_Ol{Ol: &open3.Leaf{S: "ol"}}
	return m
}

func a5Field(m proto.Message, name string) protoreflect.FieldDescriptor {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic("no field " + name)
	}
	return fd
}

// a5ReflectSetAll sets every field of m through protobuf's reflection,
// the safe way: scalars set, lists appended to, maps set and cleared,
// message fields replaced by new messages.
func a5ReflectSetAll(t *testing.T, m proto.Message) {
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsList():
			l := r.Mutable(fd).List()
			switch fd.Kind() {
			case protoreflect.MessageKind, protoreflect.GroupKind:
				l.Append(protoreflect.ValueOfMessage(l.NewElement().Message()))
				l.AppendMutable()
			case protoreflect.StringKind:
				l.Append(protoreflect.ValueOfString("appended"))
			case protoreflect.DoubleKind:
				l.Append(protoreflect.ValueOfFloat64(99))
			}
		case fd.IsMap():
			mp := r.Mutable(fd).Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool { keys = append(keys, k); return true })
			for _, k := range keys {
				mp.Clear(k)
			}
			mp.Set(protoreflect.ValueOfString("a").MapKey(), mp.NewValue())
			mp.Set(protoreflect.ValueOfString("new").MapKey(), mp.NewValue())
		case fd.Message() != nil:
			r.Set(fd, protoreflect.ValueOfMessage(r.NewField(fd).Message()))
		case fd.Kind() == protoreflect.StringKind:
			r.Set(fd, protoreflect.ValueOfString("set"))
		case fd.Kind() == protoreflect.BytesKind:
			r.Set(fd, protoreflect.ValueOfBytes([]byte("set")))
		case fd.Kind() == protoreflect.DoubleKind:
			r.Set(fd, protoreflect.ValueOfFloat64(42))
		case fd.Kind() == protoreflect.FloatKind:
			r.Set(fd, protoreflect.ValueOfFloat32(42))
		case fd.Kind() == protoreflect.Int32Kind:
			r.Set(fd, protoreflect.ValueOfInt32(42))
		}
	}
}

// a5ReflectSetScalars sets, through reflection, only the scalar fields
// of m (with presence: into their boxes; oneof: into the wrapper held).
func a5ReflectSetScalars(t *testing.T, m proto.Message) {
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() || fd.IsMap() || fd.Message() != nil {
			continue
		}
		if od := fd.ContainingOneof(); od != nil && r.WhichOneof(od) != fd {
			continue // only the case the sender set: write into its wrapper
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			r.Set(fd, protoreflect.ValueOfString("set"))
		case protoreflect.BytesKind:
			r.Set(fd, protoreflect.ValueOfBytes([]byte("set")))
		case protoreflect.DoubleKind:
			r.Set(fd, protoreflect.ValueOfFloat64(42))
		case protoreflect.FloatKind:
			r.Set(fd, protoreflect.ValueOfFloat32(42))
		case protoreflect.Int32Kind:
			r.Set(fd, protoreflect.ValueOfInt32(42))
		}
	}
}

func a5ReflectClearAll(t *testing.T, m proto.Message) {
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		r.Clear(fields.Get(i))
	}
}

// a5ReflectTruncate truncates every list (no append after it).
func a5ReflectTruncate(t *testing.T, m proto.Message) {
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsList() && r.Has(fd) {
			r.Mutable(fd).List().Truncate(0)
		}
	}
}

// a5MergeSafe merges into m a message of its type that sets only scalar,
// list, map fields and scalar oneof cases: no set message field is merged
// into.
func a5MergeSafe(src func() proto.Message) func(t *testing.T, m proto.Message) {
	return func(t *testing.T, m proto.Message) { proto.Merge(m, src()) }
}

func a5UnmarshalMergeSafe(src func() proto.Message) func(t *testing.T, m proto.Message) {
	return func(t *testing.T, m proto.Message) {
		b, err := proto.Marshal(src())
		if err != nil {
			t.Error(err)
			return
		}
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(b, m); err != nil {
			t.Error(err)
		}
	}
}

func a5Cases() []a5ShareCase {
	treeSrc := func() proto.Message {
		return &open3.Tree{D: 5, S: "merged", Leaves: []*open3.Leaf{{S: "ml"}}, ByName: map[string]*open3.Leaf{"a": {S: "MA"}, "z": {S: "MZ"}},
			Choice: &open3.Tree_Od{Od: 8}, Names: []string{"mn"}, OptD: proto.Float64(12), Ds: []float64{9}}
	}
	hybridNode := func() proto.Message {
		return &hybrid.Node{Label: proto.String("lbl"), Raw: proto.String("raw"), D: 1, Pd: proto.Float64(2),
			Child: &hybrid.Node{Label: proto.String("child")}, Kids: []*hybrid.Node{{Label: proto.String("k0")}, {Tags: []string{"kt"}}},
			Eager: &hybrid.Node{Data: []byte("ed")}, Tags: []string{"t0", "t1"}, Delimited: &hybrid.Node{Label: proto.String("del")}, Data: []byte("data")}
	}
	hybridSrc := func() proto.Message {
		return &hybrid.Node{Label: proto.String("m"), Pd: proto.Float64(9), Kids: []*hybrid.Node{{Label: proto.String("mk")}}, Tags: []string{"mt"}, Data: []byte("md")}
	}
	opaqueNode := func() proto.Message {
		return opaque.Node_builder{Label: proto.String("lbl"), Raw: proto.String("raw"), D: 1, Pd: proto.Float64(2),
			Child: opaque.Node_builder{Label: proto.String("child")}.Build(),
			Kids:  []*opaque.Node{opaque.Node_builder{Label: proto.String("k0")}.Build(), opaque.Node_builder{Tags: []string{"kt"}}.Build()},
			Eager: opaque.Node_builder{Data: []byte("ed")}.Build(), Tags: []string{"t0", "t1"},
			Delimited: opaque.Node_builder{Label: proto.String("del")}.Build(), Data: []byte("data")}.Build()
	}
	opaqueSrc := func() proto.Message {
		return opaque.Node_builder{Label: proto.String("m"), Pd: proto.Float64(9), Kids: []*opaque.Node{opaque.Node_builder{Label: proto.String("mk")}.Build()}, Tags: []string{"mt"}, Data: []byte("md")}.Build()
	}
	opaqueHolder := func() proto.Message {
		return opaque.Holder_builder{Kids: []*opaque.Node{opaque.Node_builder{Label: proto.String("k")}.Build()}, S: proto.String("s"),
			More: []*opaque.Holder{opaque.Holder_builder{S: proto.String("more")}.Build()}, Names: []string{"a", "b"}}.Build()
	}
	record := func() proto.Message {
		return &proto2.Record{Name: proto.String("rec"), D: proto.Float64(3), Grp: &proto2.Record_Grp{A: proto.Int32(1), Must: proto.String("must")},
			Kids: []*proto2.Record{{Name: proto.String("kid")}}}
	}
	recordSrc := func() proto.Message {
		return &proto2.Record{Name: proto.String("m"), D: proto.Float64(4), Kids: []*proto2.Record{{Name: proto.String("mk")}}}
	}
	dyn := func() proto.Message {
		m := dynamicpb.NewMessage((&open3.Tree{}).ProtoReflect().Descriptor())
		proto.Merge(m, a5Tree())
		return m
	}

	cs := []a5ShareCase{
		// open3, plain Go
		{"open3/go-assign", a5Tree, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			x.D, x.F, x.S = 9, 9, "x"
			x.Leaf = &open3.Leaf{S: "new"}
			x.Leaves = nil
			x.ByName = nil
			x.Choice = &open3.Tree_Ol{Ol: &open3.Leaf{}}
			x.Child = nil
			x.Names = []string{"other"}
			x.OptD = proto.Float64(1)
			x.Ds = nil
		}},
		{"open3/go-box-write", a5Tree, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			*x.OptD = 99
		}},
		{"open3/go-oneof-wrapper-write", a5Tree, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			x.Choice.(*open3.Tree_Od).Od = 99
		}},
		{"open3/go-oneof-wrapper-replace-msg", a5TreeOl, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			x.Choice.(*open3.Tree_Ol).Ol = &open3.Leaf{S: "replaced"}
		}},
		{"open3/go-append", a5Tree, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			x.Names = append(x.Names, "z")
			x.Ds = append(x.Ds, 4)
			x.Leaves = append(x.Leaves, &open3.Leaf{S: "z"})
		}},
		{"open3/go-append-twice", a5Tree, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			x.Names = append(x.Names, "z")
			x.Names = append(x.Names, "zz")
			x.Names[0] = "own now" // after a reallocating append, the list is the receiver's own
			x.Ds = append(x.Ds, 4)
			x.Ds[0] = -1
		}},
		{"open3/go-map", a5Tree, func(t *testing.T, m proto.Message) {
			x := m.(*open3.Tree)
			x.ByName["new"] = &open3.Leaf{}
			x.ByName["a"] = &open3.Leaf{S: "other"}
			delete(x.ByName, "b")
			clear(x.ByName)
		}},
		{"open3/reflect-set-all", a5Tree, a5ReflectSetAll},
		{"open3/reflect-set-all-ol", a5TreeOl, a5ReflectSetAll},
		{"open3/reflect-set-scalars", a5Tree, a5ReflectSetScalars},
		{"open3/reflect-clear-all", a5Tree, a5ReflectClearAll},
		{"open3/reflect-truncate", a5Tree, a5ReflectTruncate},
		{"open3/reflect-mutable-unset", func() proto.Message { m := a5Tree().(*open3.Tree); m.Leaf, m.Child = nil, nil; return m },
			func(t *testing.T, m proto.Message) {
				r := m.ProtoReflect()
				r.Mutable(a5Field(m, "leaf")).Message().Set(a5Field(&open3.Leaf{}, "s"), protoreflect.ValueOfString("mut"))
				r.Mutable(a5Field(m, "child")).Message().Set(a5Field(&open3.Tree{}, "s"), protoreflect.ValueOfString("mut"))
				r.Mutable(a5Field(m, "leaves")).List().AppendMutable().Message().Set(a5Field(&open3.Leaf{}, "s"), protoreflect.ValueOfString("mut"))
				r.Mutable(a5Field(m, "by_name")).Map().Mutable(protoreflect.ValueOfString("zz").MapKey()).Message().Set(a5Field(&open3.Leaf{}, "s"), protoreflect.ValueOfString("mut"))
			}},
		{"open3/reflect-oneof-od-set", a5Tree, func(t *testing.T, m proto.Message) {
			m.ProtoReflect().Set(a5Field(m, "od"), protoreflect.ValueOfFloat64(123))
		}},
		{"open3/reflect-oneof-ol-replace", a5TreeOl, func(t *testing.T, m proto.Message) {
			m.ProtoReflect().Set(a5Field(m, "ol"), protoreflect.ValueOfMessage((&open3.Leaf{S: "new"}).ProtoReflect()))
		}},
		{"open3/reset", a5Tree, func(t *testing.T, m proto.Message) { proto.Reset(m) }},
		{"open3/reset-method", a5Tree, func(t *testing.T, m proto.Message) { m.(*open3.Tree).Reset() }},
		{"open3/merge", a5Tree, a5MergeSafe(treeSrc)},
		{"open3/merge-into-ol-od", a5TreeOl, a5MergeSafe(treeSrc)},
		{"open3/unmarshal-merge", a5Tree, a5UnmarshalMergeSafe(treeSrc)},
		{"open3/merge-self-copy", a5Tree, func(t *testing.T, m proto.Message) {
			// merge a clone of the message into itself: lists grow, maps
			// and scalars are replaced; message fields set are merged into
			// (not safe), so clear those first.
			x := m.(*open3.Tree)
			x.Leaf, x.Child, x.Choice = nil, nil, nil
			src := proto.Clone(x)
			proto.Merge(x, src)
		}},

		// hybrid (edition 2023, lazy field), plain Go and reflection
		{"hybrid/go-assign", hybridNode, func(t *testing.T, m proto.Message) {
			x := m.(*hybrid.Node)
			x.Label, x.Raw, x.D, x.Pd = proto.String("x"), nil, 9, proto.Float64(9)
			x.Child, x.Eager, x.Delimited = &hybrid.Node{}, nil, nil
			x.Kids = append(x.Kids, &hybrid.Node{})
			x.Tags = append(x.Tags, "z")
			x.Data = append(x.Data, 'z')
		}},
		{"hybrid/go-box-write", hybridNode, func(t *testing.T, m proto.Message) {
			x := m.(*hybrid.Node)
			*x.Label = "boxed"
			*x.Raw = "boxed"
			*x.Pd = 99
		}},
		{"hybrid/setters", hybridNode, func(t *testing.T, m proto.Message) {
			x := m.(*hybrid.Node)
			x.SetLabel("set")
			x.SetPd(77)
			x.SetD(77)
			x.SetTags(append(x.GetTags(), "z"))
			x.SetData(append(x.GetData(), 'z'))
			x.SetKids(append(x.GetKids(), &hybrid.Node{}))
			x.ClearChild()
			x.ClearEager()
		}},
		{"hybrid/reflect-set-all", hybridNode, a5ReflectSetAll},
		{"hybrid/reflect-set-scalars", hybridNode, a5ReflectSetScalars},
		{"hybrid/reflect-clear-all", hybridNode, a5ReflectClearAll},
		{"hybrid/reflect-truncate", hybridNode, a5ReflectTruncate},
		{"hybrid/reset", hybridNode, func(t *testing.T, m proto.Message) { proto.Reset(m) }},
		{"hybrid/merge", hybridNode, a5MergeSafe(hybridSrc)},
		{"hybrid/unmarshal-merge", hybridNode, a5UnmarshalMergeSafe(hybridSrc)},

		// opaque
		{"opaque/setters", opaqueNode, func(t *testing.T, m proto.Message) {
			x := m.(*opaque.Node)
			x.SetLabel("set")
			x.SetRaw("set")
			x.SetPd(77)
			x.SetD(77)
			x.SetTags(append(x.GetTags(), "z"))
			x.SetData(append(x.GetData(), 'z'))
			x.SetKids(append(x.GetKids(), opaque.Node_builder{}.Build()))
			x.SetChild(opaque.Node_builder{Label: proto.String("c2")}.Build())
			x.ClearEager()
			x.ClearDelimited()
		}},
		{"opaque/clearers", opaqueNode, func(t *testing.T, m proto.Message) {
			x := m.(*opaque.Node)
			x.ClearLabel()
			x.ClearRaw()
			x.ClearPd()
			x.ClearChild()
			x.ClearEager()
			x.ClearDelimited()
			x.ClearData()
			x.SetKids(nil)
			x.SetTags(nil)
		}},
		{"opaque/setters-nil-kids-then-append", opaqueNode, func(t *testing.T, m proto.Message) {
			x := m.(*opaque.Node)
			k := x.GetKids()
			x.SetKids(nil)
			x.SetKids(append(k, opaque.Node_builder{}.Build()))
		}},
		{"opaque/reflect-set-all", opaqueNode, a5ReflectSetAll},
		{"opaque/reflect-set-scalars", opaqueNode, a5ReflectSetScalars},
		{"opaque/reflect-clear-all", opaqueNode, a5ReflectClearAll},
		{"opaque/reflect-truncate", opaqueNode, a5ReflectTruncate},
		{"opaque/reset", opaqueNode, func(t *testing.T, m proto.Message) { proto.Reset(m) }},
		{"opaque/merge", opaqueNode, a5MergeSafe(opaqueSrc)},
		{"opaque/unmarshal-merge", opaqueNode, a5UnmarshalMergeSafe(opaqueSrc)},
		{"opaque-holder/reflect-set-all", opaqueHolder, a5ReflectSetAll},
		{"opaque-holder/reflect-truncate", opaqueHolder, a5ReflectTruncate},
		{"opaque-holder/setters", opaqueHolder, func(t *testing.T, m proto.Message) {
			x := m.(*opaque.Holder)
			x.SetKids(append(x.GetKids(), opaque.Node_builder{}.Build()))
			x.SetMore(append(x.GetMore(), opaque.Holder_builder{}.Build()))
			x.SetNames(append(x.GetNames(), "z"))
			x.SetS("set")
		}},
		{"opaque-holder/merge", opaqueHolder, a5MergeSafe(func() proto.Message {
			return opaque.Holder_builder{Kids: []*opaque.Node{opaque.Node_builder{}.Build()}, Names: []string{"m"}, More: []*opaque.Holder{opaque.Holder_builder{}.Build()}}.Build()
		})},

		// proto2
		{"proto2/go-box-write", record, func(t *testing.T, m proto.Message) {
			x := m.(*proto2.Record)
			*x.Name = "boxed"
			*x.D = 99
		}},
		{"proto2/reflect-set-scalars", record, a5ReflectSetScalars},
		{"proto2/reflect-set-all", record, a5ReflectSetAll},
		{"proto2/merge", record, a5MergeSafe(recordSrc)},
		{"proto2/unmarshal-merge", record, a5UnmarshalMergeSafe(recordSrc)},
		{"proto2/set-extension", record, func(t *testing.T, m proto.Message) {
			proto.SetExtension(m, proto2.E_Note, "note")
		}},
		{"proto2/reset", record, func(t *testing.T, m proto.Message) { proto.Reset(m) }},

		// dynamicpb
		{"dynamic/reflect-set-all", dyn, a5ReflectSetAll},
		{"dynamic/reflect-set-scalars", dyn, a5ReflectSetScalars},
		{"dynamic/merge", dyn, a5MergeSafe(func() proto.Message {
			m := dynamicpb.NewMessage((&open3.Tree{}).ProtoReflect().Descriptor())
			proto.Merge(m, treeSrc())
			return m
		})},
	}
	return cs
}

// a5Reader reads m until stop is closed, then returns. It reads with
// protobuf (every field, nested ones included).
func a5Reader(m proto.Message, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, _ = proto.MarshalOptions{Deterministic: true}.Marshal(m)
			_ = prototext.Format(m)
			select {
			case <-stop:
				return
			default:
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	return done
}

// a5Run runs c over cc in the request and response directions and
// returns "" if the sender's message was untouched, or what changed.
func a5Run(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface, c a5ShareCase, dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	switch dir {
	case "request":
		msg := c.build()
		want := proto.Clone(msg)
		cc := serve(&anySvc{
			newReq: func() proto.Message { return msg.ProtoReflect().Type().New().Interface() },
			resp: func(req proto.Message) (proto.Message, error) {
				time.Sleep(time.Millisecond) // let the sender's reader run
				c.mutate(t, req)
				return &emptypb.Empty{}, nil
			},
		})
		stop := make(chan struct{})
		done := a5Reader(msg, stop)
		err := cc.Invoke(ctx, anyUnary, msg, &emptypb.Empty{})
		time.Sleep(time.Millisecond)
		close(stop)
		<-done
		if err != nil {
			return "call: " + err.Error()
		}
		if !proto.Equal(msg, want) {
			return fmt.Sprintf("sender's request changed:\n got  %v\n want %v", prototext.Format(msg), prototext.Format(want))
		}
		return ""
	case "response":
		var sent proto.Message
		var want proto.Message
		stop := make(chan struct{})
		var done <-chan struct{}
		cc := serve(&anySvc{
			newReq: func() proto.Message { return &emptypb.Empty{} },
			resp: func(proto.Message) (proto.Message, error) {
				sent = c.build()
				want = proto.Clone(sent)
				done = a5Reader(sent, stop)
				return sent, nil
			},
		})
		reply := c.build().ProtoReflect().Type().New().Interface()
		err := cc.Invoke(ctx, anyUnary, &emptypb.Empty{}, reply)
		if err == nil {
			time.Sleep(time.Millisecond)
			c.mutate(t, reply)
			time.Sleep(time.Millisecond)
		}
		close(stop)
		if done != nil {
			<-done
		}
		if err != nil {
			return "call: " + err.Error()
		}
		if !proto.Equal(sent, want) {
			return fmt.Sprintf("sender's response changed:\n got  %v\n want %v", prototext.Format(sent), prototext.Format(want))
		}
		return ""
	}
	panic(dir)
}

// TestAttack5ShareSafeMutations: every "safe" change a receiver makes
// leaves the sender's message as grpc-go leaves it: untouched.
func TestAttack5ShareSafeMutations(t *testing.T) {
	shareModes := []struct {
		name string
		opts []inproc.Option
	}{
		{"share/isolated", []inproc.Option{inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Isolated)}},
		{"share/inline", []inproc.Option{inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Inline)}},
	}
	for _, c := range a5Cases() {
		for _, dir := range []string{"request", "response"} {
			t.Run(c.name+"/"+dir, func(t *testing.T) {
				want := a5Run(t, func(s *anySvc) grpc.ClientConnInterface { return anyReference(t, s) }, c, dir)
				if want != "" {
					t.Fatalf("oracle (grpc-go over bufconn): %s", want)
				}
				for _, m := range shareModes {
					t.Run(m.name, func(t *testing.T) {
						got := a5Run(t, func(s *anySvc) grpc.ClientConnInterface {
							ch := inproc.New(m.opts...)
							t.Cleanup(ch.Stop)
							ch.RegisterService(anyDesc, s)
							return ch
						}, c, dir)
						if got != want {
							t.Errorf("grpc-go: sender's message untouched; inproc: %s", got)
						}
					})
				}
			})
		}
	}
}
