package inproc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// TestTypedNilOneofWrapperAsGRPC: a oneof field holding a typed nil
// wrapper ((*M_Case)(nil)) is unset to protobuf: Marshal writes nothing
// for it, and over grpc-go the receiver's oneof is nil, so that its
// generated getters return the zero value. A receiver in-process must not
// get the typed nil, on which the generated getter dereferences nil.
func TestTypedNilOneofWrapperAsGRPC(t *testing.T) {
	cases := []struct {
		name string
		msg  func() proto.Message
		look func(proto.Message) string
	}{
		{"proto3/string-case", func() proto.Message { return &flat3.Rich{S: "s", Pick: (*flat3.Rich_Os)(nil)} }, func(m proto.Message) string {
			r := m.(*flat3.Rich)
			return fmt.Sprintf("pick nil=%v GetOs: %v", r.Pick == nil, catch(func() error { _ = r.GetOs(); return nil }))
		}},
		{"proto3/message-case", func() proto.Message { return &flat3.Rich{S: "s", Pick: (*flat3.Rich_Ol)(nil)} }, func(m proto.Message) string {
			r := m.(*flat3.Rich)
			return fmt.Sprintf("pick nil=%v GetOl: %v", r.Pick == nil, catch(func() error { _ = r.GetOl(); return nil }))
		}},
		{"open3/double-case", func() proto.Message { return &open3.Tree{S: "s", Choice: (*open3.Tree_Od)(nil)} }, func(m proto.Message) string {
			r := m.(*open3.Tree)
			return fmt.Sprintf("choice nil=%v GetOd: %v", r.Choice == nil, catch(func() error { _ = r.GetOd(); return nil }))
		}},
		{"vtprotobuf/string-case", func() proto.Message { return &vtclone.Rich{S: "s", Pick: (*vtclone.Rich_Os)(nil)} }, func(m proto.Message) string {
			r := m.(*vtclone.Rich)
			return fmt.Sprintf("pick nil=%v GetOs: %v", r.Pick == nil, catch(func() error { _ = r.GetOs(); return nil }))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			anyAgree(t, func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string {
				saw := make(chan string, 1)
				svc := &anySvc{newReq: func() proto.Message { return c.msg().ProtoReflect().New().Interface() }, resp: func(req proto.Message) (proto.Message, error) {
					saw <- c.look(req)
					return c.msg(), nil
				}}
				reply := c.msg().ProtoReflect().New().Interface()
				if err := serve(svc).Invoke(context.Background(), anyUnary, c.msg(), reply); err != nil {
					return err.Error()
				}
				return fmt.Sprintf("handler: %s | client: %s", receive(t, saw, "the handler"), c.look(reply))
			})
		})
	}
}
