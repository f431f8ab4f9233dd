package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8none"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// describeMsg says what a receiver got: the message's full name and its
// field 1, as text.
func describeMsg(m proto.Message) string {
	rm := m.ProtoReflect()
	fd := rm.Descriptor().Fields().ByNumber(1)
	v := ""
	if fd != nil && rm.Has(fd) {
		v = fmt.Sprint(rm.Get(fd).Interface())
		if b, ok := rm.Get(fd).Interface().([]byte); ok {
			v = string(b)
		}
	}
	return fmt.Sprintf("%s{%s}", rm.Descriptor().FullName(), v)
}

// TestDynamicAcrossDescriptors: a sender sends a dynamic
// message of one descriptor (google.protobuf.StringValue) to a receiver
// whose message is a dynamic message of another (localgrpc's EchoRequest
// or EchoResponse), both of Go type *dynamicpb.Message. Over a socket the
// receiver gets a message of its own descriptor whose field 1 holds the
// bytes sent. inproc copies across the two (shallowCopy and
// shallowCopyPlanned compare Go types, not descriptors): the receiver's
// message turns into a StringValue, and a unary client's Clone transfer
// (proto.Merge of one descriptor into the other) panics.
func TestDynamicAcrossDescriptors(t *testing.T) {
	echoMD := (&echov1.EchoRequest{}).ProtoReflect().Descriptor()
	respMD := (&echov1.EchoResponse{}).ProtoReflect().Descriptor()
	strMD := (&wrapperspb.StringValue{}).ProtoReflect().Descriptor()
	dynString := func(s string) proto.Message {
		m := dynamicpb.NewMessage(strMD)
		m.Set(strMD.Fields().ByNumber(1), protoreflect.ValueOfString(s))
		return m
	}
	cases := []struct {
		name  string
		svc   func() *anySvc
		req   func() any
		reply func() proto.Message
	}{
		{"request", func() *anySvc {
			return &anySvc{
				newReq: func() proto.Message { return dynamicpb.NewMessage(echoMD) },
				resp: func(req proto.Message) (proto.Message, error) {
					return wrapperspb.String(describeMsg(req)), nil
				},
			}
		}, func() any { return dynString("hello") }, func() proto.Message { return &wrapperspb.StringValue{} }},
		{"response", func() *anySvc {
			return &anySvc{
				newReq: func() proto.Message { return &echov1.EchoRequest{} },
				resp: func(proto.Message) (proto.Message, error) {
					return dynString("hello"), nil
				},
			}
		}, func() any { return &echov1.EchoRequest{Text: "hi"} }, func() proto.Message { return dynamicpb.NewMessage(respMD) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call := func(cc grpc.ClientConnInterface) (string, error) {
				reply := tc.reply()
				if err := cc.Invoke(context.Background(), anyUnary, tc.req(), reply); err != nil {
					return "", err
				}
				return describeMsg(reply), nil
			}
			want, err := call(anyReference(t, tc.svc()))
			if err != nil {
				t.Fatal(err)
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				ch := newChannel(t, m)
				ch.RegisterService(anyDesc, tc.svc())
				var got string
				err := catch(func() (err error) { got, err = call(ch); return err })
				if err != nil || got != want {
					t.Errorf("reply %s, %v; grpc-go gives %s", got, err, want)
				}
			})
		})
	}
}

// TestAlternatingTypesOnStream: one client stream sends, in
// turn, messages of four Go types that share field 1 (StringValue,
// EchoRequest, BytesValue, a dynamic EchoRequest), so the plan kept for
// the last type sent must switch at every message; the handler receives
// each into the same EchoRequest. With Clone, the sender scribbles over and
// resets its message right after each Send. What the handler
// receives must be what grpc-go delivers, message for message,
// including the refusal of a BytesValue that is not UTF-8.
func TestAlternatingTypesOnStream(t *testing.T) {
	echoMD := (&echov1.EchoRequest{}).ProtoReflect().Descriptor()
	texts := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven\xff"}
	newSvc := func() *anySvc {
		return &anySvc{bidi: func(ss grpc.ServerStream) error {
			in := &echov1.EchoRequest{}
			for {
				err := ss.RecvMsg(in)
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := ss.SendMsg(&echov1.EchoResponse{Text: describeMsg(in)}); err != nil {
					return err
				}
			}
		}}
	}
	run := func(cc grpc.ClientConnInterface, scribble bool) ([]string, error) {
		s, err := cc.NewStream(context.Background(), anyBidiDesc, anyBidi)
		if err != nil {
			return nil, err
		}
		var got []string
		for i, text := range texts {
			var m proto.Message
			switch i % 4 {
			case 0:
				m = wrapperspb.String(text)
			case 1:
				m = &echov1.EchoRequest{Text: text}
			case 2:
				m = wrapperspb.Bytes([]byte(text))
			case 3:
				d := dynamicpb.NewMessage(echoMD)
				d.Set(echoMD.Fields().ByNumber(1), protoreflect.ValueOfString(text))
				m = d
			}
			if err := s.SendMsg(m); err != nil {
				got = append(got, "send: "+status.Code(err).String())
				break
			}
			if scribble { // allowed with Clone only
				if b, ok := m.(*wrapperspb.BytesValue); ok {
					for j := range b.Value {
						b.Value[j] = 'X'
					}
				}
				proto.Reset(m)
			}
			reply := &echov1.EchoResponse{}
			if err := s.RecvMsg(reply); err != nil {
				got = append(got, "recv: "+status.Code(err).String())
				break
			}
			got = append(got, reply.Text)
		}
		return got, nil
	}
	want, err := run(anyReference(t, newSvc()), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(texts) || !strings.HasPrefix(want[len(want)-1], "recv: "+codes.Internal.String()) {
		t.Fatalf("grpc-go gave %q", want)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, newSvc())
		var got []string
		err := catch(func() (err error) { got, err = run(ch, !isShare(t, m)); return err })
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("handler saw %q, %v; grpc-go's saw %q", got, err, want)
		}
	})
}

// TestSharedCachedResponse: a handler answers every call with the
// same response object, as handlers that cache an answer do. Over a
// socket each client gets its own decoded copy. With Clone, clients that
// scribble over their reply's bytes, list and unknown fields in place
// must not change what the next callers get; with Share, clients change
// only their reply's top level, which is theirs. Run with -race.
func TestSharedCachedResponse(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		shared := &listv1.ListResponse{Strings: []string{"a", "b", "c"}}
		shared.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), []byte("unknown")))
		want := proto.Clone(shared)
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, &anySvc{
			newReq: func() proto.Message { return &echov1.EchoRequest{} },
			resp:   func(proto.Message) (proto.Message, error) { return shared, nil },
		})
		clone := !isShare(t, m)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for range 100 {
					reply := &listv1.ListResponse{}
					if err := ch.Invoke(context.Background(), anyUnary, &echov1.EchoRequest{Text: "x"}, reply); err != nil {
						errs <- err
						return
					}
					if !proto.Equal(reply, want) {
						errs <- fmt.Errorf("reply %v, want %v", reply, want)
						return
					}
					if clone {
						reply.Strings[0] = "scribbled"
						for i := range reply.ProtoReflect().GetUnknown() {
							reply.ProtoReflect().GetUnknown()[i] = 'X'
						}
					} else {
						reply.Strings = nil
						reply.ProtoReflect().SetUnknown(nil)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if !proto.Equal(shared, want) {
			t.Errorf("the handler's cached response became %v", shared)
		}
	})
}

// TestGeneratedShapesAsGRPC runs generated types of the zoo (flat3's
// proto3 flat and rich messages, editionsutf8's and editionsutf8none's
// per-field and per-file UTF-8 validation and extensions, opaqueimplicit's
// opaque API with implicit presence, vtclone's fast clones) through the
// oracle harness: what each side receives, and what becomes of the
// client's message, as over grpc-go, in every mode.
func TestGeneratedShapesAsGRPC(t *testing.T) {
	negZero := math.Copysign(0, -1)
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "u")
	cases := []oracleCase{
		{name: "flat/full", msg: func() proto.Message { return sentFlat("oracle", 4) }},
		{name: "flat/neg-zero-nan", msg: func() proto.Message {
			return &flat3.Flat{D: negZero, F: float32(math.NaN()), Leaf: &flat3.Leaf{D: math.Float64frombits(0x7ff8000000000123)}}
		}},
		{name: "flat/nested-unknown", msg: func() proto.Message {
			l := &flat3.Leaf{S: "l"}
			l.ProtoReflect().SetUnknown(unknown)
			return &flat3.Flat{Leaves: []*flat3.Leaf{l}}
		}},
		{name: "flat/nil-in-list", msg: func() proto.Message { return &flat3.Flat{Leaves: []*flat3.Leaf{{S: "a"}, nil}} }},
		{name: "flat/invalid-utf8-deep", msg: func() proto.Message {
			return &flat3.Flat{Child: &flat3.Flat{Leaves: []*flat3.Leaf{{Tags: []string{"ok", badUTF8}}}}}
		}},
		{name: "order/invalid", msg: func() proto.Message { return &flat3.Order{Third: badUTF8} }},
		{name: "rich/full", msg: func() proto.Message {
			return &flat3.Rich{S: "s", Kv: map[string]string{"a": "b"}, Pick: &flat3.Rich_Ob{Ob: []byte{}}, Leaves: []*flat3.Leaf{{}}, Nums: []int32{-1, 0}, B: []byte{0}, Opt: proto.String("")}
		}},
		{name: "rich/oneof-leaf-nil", msg: func() proto.Message { return &flat3.Rich{Pick: &flat3.Rich_Ol{}} }},
		{name: "rich/map-invalid-key", msg: func() proto.Message { return &flat3.Rich{Kv: map[string]string{badUTF8: "v"}} }},
		{name: "editions/raw-not-checked", msg: func() proto.Message {
			return &editionsutf8.Root{Raw: badUTF8, Raws: []string{badUTF8}, Rawkv: map[string]string{badUTF8: badUTF8}, Leaf: &editionsutf8.Leaf{Raw: badUTF8}}
		}},
		{name: "editions/checked-in-leaf", msg: func() proto.Message {
			return &editionsutf8.Root{Leaves: []*editionsutf8.Leaf{{Raw: "x"}, {S: badUTF8}}}
		}},
		{name: "editions/extensions", msg: func() proto.Message {
			m := &editionsutf8.Root{S: "s"}
			proto.SetExtension(m, editionsutf8.E_ExtS, "é")
			proto.SetExtension(m, editionsutf8.E_ExtTags, []string{"a"})
			proto.SetExtension(m, editionsutf8.E_ExtLeaf, &editionsutf8.Leaf{S: "x"})
			return m
		}},
		{name: "editions/extension-leaf-invalid", msg: func() proto.Message {
			m := &editionsutf8.Root{}
			proto.SetExtension(m, editionsutf8.E_ExtLeaf, &editionsutf8.Leaf{S: badUTF8})
			return m
		}},
		{name: "editions/file-none", msg: func() proto.Message {
			return &editionsutf8none.Strings{S: badUTF8, Tags: []string{badUTF8}, Kv: map[string]string{badUTF8: "v"}}
		}},
		{name: "editions/file-none-verify-field", msg: func() proto.Message { return &editionsutf8none.Strings{V: badUTF8} }},
		{name: "opaque/full", msg: func() proto.Message {
			return opaqueimplicit.Tree_builder{S: "s", B: []byte{1}, Names: []string{"n"}, Leaf: opaqueimplicit.Leaf_builder{S: "l"}.Build(),
				Leaves: []*opaqueimplicit.Leaf{opaqueimplicit.Leaf_builder{Tags: []string{"t"}}.Build()}, D: negZero, Kv: map[string]string{"k": "v"}}.Build()
		}},
		{name: "opaque/invalid", msg: func() proto.Message {
			return opaqueimplicit.Tree_builder{Leaves: []*opaqueimplicit.Leaf{opaqueimplicit.Leaf_builder{Tags: []string{badUTF8}}.Build()}}.Build()
		}},
		{name: "vt/flat", msg: func() proto.Message {
			return &vtclone.Flat{S: "s", B: []byte{}, Names: []string{"n"}, Leaf: &vtclone.Leaf{B: []byte{}}, Leaves: []*vtclone.Leaf{{S: "x"}}}
		}},
		{name: "vt/rich", msg: func() proto.Message {
			return &vtclone.Rich{Kv: map[string]string{"k": "v"}, Pick: &vtclone.Rich_Ol{Ol: &vtclone.Leaf{S: "o"}}, Nums: []int32{1}, B: []byte{}}
		}},
		{name: "vt/rich-nested-unknown", msg: func() proto.Message {
			l := &vtclone.Leaf{S: "l"}
			l.ProtoReflect().SetUnknown(unknown)
			return &vtclone.Rich{Pick: &vtclone.Rich_Ol{Ol: l}}
		}},
		{name: "vt/invalid", msg: func() proto.Message { return &vtclone.Rich{Kv: map[string]string{"k": badUTF8}} }},
		{name: "dynamic-to-generated", msg: func() proto.Message {
			d := dynamicpb.NewMessage((&flat3.Flat{}).ProtoReflect().Descriptor())
			proto.Merge(d, sentFlat("dyn", 3))
			return d
		}, recv: func() proto.Message { return &flat3.Flat{} }},
		{name: "none-to-verify", msg: func() proto.Message { return &editionsutf8.Unchecked{S: badUTF8} }, recv: func() proto.Message { return &flat3.Leaf{} }},
	}
	oracleAgree(t, cases)
}

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
