package inproc_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"
)

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
