package inproc_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/localgrpc/localgrpc/inproc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/inproc/internal/zoo/proto2"
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
// message never changes. Share promises the receiver a top level of its
// own "whatever protobuf's API or plain Go does to it".
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
