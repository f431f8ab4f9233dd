package integration_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/internal/bench/storepb"
	"github.com/localgrpc/localgrpc/cmd/internal/vtzoo"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"github.com/localgrpc/localgrpc/internal/zoo/editions"
	"github.com/localgrpc/localgrpc/internal/zoo/editionsutf8"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/opaqueimplicit"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"github.com/localgrpc/localgrpc/internal/zoo/vtclone"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// genServerMaxRecv is both servers' receive limit, unless a case sets its
// own; a message of genLarge bytes crosses below it.
const (
	genServerMaxRecv = 2 << 20
	genLarge         = 1 << 20
)

// genCase is one message sent both ways, as a unary request and twice on
// a bidi stream, whose handler answers each request with resp(request).
type genCase struct {
	name string
	// req makes the client's request, afresh for each call.
	req func() any
	// newReq makes the message the handler decodes a request into; nil:
	// one of req's type.
	newReq func() any
	// resp makes the handler's response from its request; nil: the
	// request itself.
	resp func(req any) any
	// newResp makes the message the client decodes a response into; nil:
	// one of req's type.
	newResp func() any
	// opts are the call's options.
	opts []grpc.CallOption
	// serverMaxRecv is both servers' receive limit; 0: genServerMaxRecv.
	serverMaxRecv int
	// lossy says the codec does not give back exactly what was sent, on
	// any transport: the handler's message is compared with grpc-go's
	// handler's alone.
	lossy bool
}

var genCases = []genCase{
	// protoc-gen-go, open API, proto3: implicit presence (-0 is sent),
	// proto3 optional, nested, repeated and recursive messages, a map of
	// several keys, a oneof.
	{name: "protoc-gen-go/open3", req: func() any { return open3Tree() }},
	// protoc-gen-go, open API, proto2: required fields, a default of -0,
	// a group, and extensions of scalar and message type.
	{name: "protoc-gen-go/proto2", req: func() any { return proto2Record() }},
	// protoc-gen-go, open API, editions: a field of unvalidated UTF-8, a
	// lazy field, a delimited (group-encoded) one.
	{name: "protoc-gen-go/editions-open", req: func() any { return editionsNode() }},
	{name: "protoc-gen-go/hybrid", req: func() any { return hybridNode() }},
	{name: "protoc-gen-go/opaque", req: func() any { return opaqueNode() }},
	{name: "protoc-gen-go/opaque-implicit", req: func() any { return opaqueImplicitTree() }},
	// editions' UTF-8 validation off field by field, in extensions and
	// maps too: invalid UTF-8 where it is not validated crosses as is.
	{name: "protoc-gen-go/editions-utf8-none-fields", req: func() any { return editionsUTF8Root() }},
	// protoc-gen-go's messages with vtprotobuf's clone beside them.
	{name: "vtprotobuf/clone-only", req: func() any { return vtcloneRich() }},
	// vtprotobuf's full fast paths, through grpc-go's default codec and
	// through a codec of vtprotobuf's methods chosen by content-subtype,
	// as users of vtprotobuf's codec register it.
	{name: "vtprotobuf/default-codec", req: func() any { return vtzooTree() }},
	// (vtprotobuf's MarshalVT drops the -0 of fields of implicit
	// presence, as if it were 0.)
	{name: "vtprotobuf/vtproto-codec", req: func() any { return vtzooTree() }, opts: []grpc.CallOption{grpc.CallContentSubtype(vtprotoCodec{}.Name())}, lossy: true},
	// gogoproto (gogofaster): non-nullable repeated fields, a oneof, its
	// own Marshal and Unmarshal.
	{name: "gogoproto/series", req: func() any { return seriesResponse(16) }},
	// A message larger than a shm: ring and than a frame: it crosses the
	// socket, in two frames.
	{name: "gogoproto/1MiB", req: func() any { return seriesResponse(genLarge) }},
	// dynamicpb on both sides, and on one side against generated code on
	// the other.
	{name: "dynamicpb/both", req: func() any { return dynamicTree() }, newReq: newDynamicTree},
	{name: "dynamicpb/to-generated", req: func() any { return dynamicTree() }, newReq: func() any { return new(open3.Tree) }},
	{name: "dynamicpb/from-generated", req: func() any { return open3Tree() }, newReq: newDynamicTree, newResp: newDynamicTree},
	// A Go type that is no protobuf message, with a codec of its own
	// chosen by content-subtype.
	{name: "custom-codec/json", req: func() any { return &jsonNote{Text: "héllo", N: -1, Tags: []string{"a", ""}} }, opts: []grpc.CallOption{grpc.CallContentSubtype(jsonCodec{}.Name())}},
	// A handler that decodes into a narrower type keeps the rest as
	// unknown fields, and sends them back.
	// (A map of one key: grpc-go's codec orders a map's entries at
	// random, which the unknown fields keep.)
	{name: "protoc-gen-go/unknown-fields", req: func() any {
		m := open3Tree()
		m.ByName = map[string]*open3.Leaf{"k": {S: "v"}}
		return m
	}, newReq: func() any { return new(open3.Leaf) }, newResp: func() any { return new(open3.Tree) }},

	// Refusals.
	// A proto3 string of invalid UTF-8: the client refuses to marshal it.
	// grpc-go's client has opened the stream by then, unary or not, so
	// its server runs the handler, whose Recv fails with Canceled.
	{name: "refused/protoc-gen-go/client-marshal-utf8", req: func() any { return &flat3.Flat{S: "ok", Names: []string{"\xff"}} }},
	{name: "refused/dynamicpb/client-marshal-utf8", req: func() any {
		m := dynamicTree()
		m.Set(m.Descriptor().Fields().ByName("s"), protoreflect.ValueOfString("\xc3"))
		return m
	}, newReq: newDynamicTree},
	// A proto2 message without its required field.
	{name: "refused/proto2/client-marshal-required", req: func() any { return &proto2.Record{D: proto.Float64(1)} }},
	// Invalid UTF-8 the sender does not validate, into a field the handler
	// validates: the server refuses to unmarshal it.
	{name: "refused/protoc-gen-go/server-unmarshal-utf8", req: func() any { return &editionsutf8.Unchecked{S: "a\xffb"} }, newReq: func() any { return new(flat3.Flat) }},
	{name: "refused/gogoproto/server-unmarshal-utf8", req: func() any { return &storepb.Label{Name: "\xfe", Value: "v"} }, newReq: func() any { return new(flat3.Leaf) }},
	// gogoproto validates no UTF-8, on either side.
	{name: "gogoproto/invalid-utf8", req: func() any { return &storepb.Label{Name: "\xfe", Value: "v\xff"} }},
	// A response of invalid UTF-8: the server refuses to marshal it, or
	// the client to unmarshal it.
	{name: "refused/protoc-gen-go/server-marshal-utf8", req: func() any { return &flat3.Flat{S: "ok"} }, resp: func(any) any { return &flat3.Flat{S: "\xff"} }},
	{name: "refused/protoc-gen-go/client-unmarshal-utf8", req: func() any { return &flat3.Flat{S: "ok"} }, resp: func(any) any { return &editionsutf8.Unchecked{S: "\xff"} }, newResp: func() any { return new(flat3.Flat) }},
	// A message without a required field, unmarshaled: refused as well.
	{name: "refused/proto2/server-unmarshal-required", req: func() any { return &flat3.Leaf{D: 1} }, newReq: func() any { return new(proto2.Record) }},
	// Size limits: the client's receive limit, the server's receive
	// limit, the client's send limit.
	{name: "refused/gogoproto/client-recv-limit", req: func() any { return seriesResponse(2000) }, opts: []grpc.CallOption{grpc.MaxCallRecvMsgSize(1000)}},
	{name: "refused/opaque/client-recv-limit", req: func() any { return opaqueNode() }, resp: func(any) any {
		return opaque.Node_builder{Data: make([]byte, 5000)}.Build()
	}, newResp: func() any { return new(opaque.Node) }, opts: []grpc.CallOption{grpc.MaxCallRecvMsgSize(1000)}},
	{name: "refused/gogoproto/server-recv-limit", req: func() any { return seriesResponse(2000) }, serverMaxRecv: 1000},
	// A request over the server's limit that shm: carries in several
	// frames: grpc-go's handler runs, and its Recv refuses the message.
	{name: "refused/vtprotobuf/server-recv-limit-large", req: func() any {
		return &vtzoo.Tree{Leaf: &vtzoo.Leaf{B: make([]byte, genServerMaxRecv+1)}}
	}, opts: []grpc.CallOption{grpc.CallContentSubtype(vtprotoCodec{}.Name())}},
	// The client's send limit refuses the request once it is marshaled:
	// grpc-go's handler runs, and its Recv fails with Canceled.
	{name: "refused/dynamicpb/client-send-limit", req: func() any { return dynamicTree() }, newReq: newDynamicTree, opts: []grpc.CallOption{grpc.MaxCallSendMsgSize(10)}},
}

func open3Tree() *open3.Tree {
	return &open3.Tree{
		D: math.Copysign(0, -1), F: 1.5, S: "héllo",
		Leaf:   &open3.Leaf{S: "leaf", B: []byte{0, 1}},
		Leaves: []*open3.Leaf{{D: 1}, {}, {S: "z"}},
		ByName: map[string]*open3.Leaf{"a": {F: -1}, "b": nil, "c": {S: "c"}, "": {}},
		Choice: &open3.Tree_Ol{Ol: &open3.Leaf{S: "in the oneof"}},
		Child:  &open3.Tree{Names: []string{"x", ""}, Choice: &open3.Tree_Od{Od: 0}},
		Names:  []string{"α", "β"},
		OptD:   proto.Float64(0),
		Ds:     []float64{1, math.Copysign(0, -1), math.Inf(1)},
	}
}

func proto2Record() *proto2.Record {
	r := &proto2.Record{
		Name: proto.String("root"),
		D:    proto.Float64(math.Copysign(0, -1)),
		Grp:  &proto2.Record_Grp{A: proto.Int32(-7), Must: proto.String("must")},
		Kids: []*proto2.Record{{Name: proto.String("kid")}},
	}
	proto.SetExtension(r, proto2.E_Note, "a note")
	proto.SetExtension(r, proto2.E_Sub, &proto2.Record{Name: proto.String("sub"), Grp: &proto2.Record_Grp{Must: proto.String("")}})
	return r
}

func editionsNode() *editions.Node {
	return &editions.Node{
		Label: proto.String("label"), Raw: proto.String("raw \xff"), D: math.Copysign(0, -1), Pd: proto.Float64(0),
		Child:     &editions.Node{Label: proto.String("lazy"), Kids: []*editions.Node{{}}},
		Kids:      []*editions.Node{{Tags: []string{"t"}}},
		Eager:     &editions.Node{Data: []byte{}},
		Tags:      []string{"", "x"},
		Delimited: &editions.Node{Label: proto.String("delimited"), Delimited: &editions.Node{}},
		Data:      []byte("data"),
	}
}

func hybridNode() *hybrid.Node {
	return hybrid.Node_builder{
		Label: proto.String("label"), Raw: proto.String("raw \xff"), D: math.Copysign(0, -1), Pd: proto.Float64(0),
		Child:     hybrid.Node_builder{Label: proto.String("lazy"), Kids: []*hybrid.Node{{}}}.Build(),
		Kids:      []*hybrid.Node{hybrid.Node_builder{Tags: []string{"t"}}.Build()},
		Eager:     hybrid.Node_builder{Data: []byte{}}.Build(),
		Tags:      []string{"", "x"},
		Delimited: hybrid.Node_builder{Label: proto.String("delimited")}.Build(),
		Data:      []byte("data"),
	}.Build()
}

func opaqueNode() *opaque.Node {
	return opaque.Node_builder{
		Label: proto.String("label"), Raw: proto.String("raw \xff"), D: math.Copysign(0, -1), Pd: proto.Float64(0),
		Child:     opaque.Node_builder{Label: proto.String("lazy"), Kids: []*opaque.Node{{}}}.Build(),
		Kids:      []*opaque.Node{opaque.Node_builder{Tags: []string{"t"}}.Build()},
		Eager:     opaque.Node_builder{Data: []byte{}}.Build(),
		Tags:      []string{"", "x"},
		Delimited: opaque.Node_builder{Label: proto.String("delimited")}.Build(),
		Data:      []byte("data"),
	}.Build()
}

func opaqueImplicitTree() *opaqueimplicit.Tree {
	return opaqueimplicit.Tree_builder{
		S: "s", B: []byte{1}, Names: []string{"n"}, D: math.Copysign(0, -1),
		Leaf:   opaqueimplicit.Leaf_builder{S: "leaf", Tags: []string{""}}.Build(),
		Leaves: []*opaqueimplicit.Leaf{{}, opaqueimplicit.Leaf_builder{B: []byte("b")}.Build()},
		Kv:     map[string]string{"k1": "v1", "k2": "", "": "v3"},
	}.Build()
}

func editionsUTF8Root() *editionsutf8.Root {
	r := &editionsutf8.Root{
		S: "valid", Raw: "\xff", Tags: []string{"t"}, Raws: []string{"\xfe", "ok"},
		Leaf:   &editionsutf8.Leaf{Raw: "\x80", Raws: []string{"\xc3"}},
		Leaves: []*editionsutf8.Leaf{{S: "s"}},
		Kv:     map[string]string{"k": "v", "l": "w"},
		Rawkv:  map[string]string{"\xff": "\xfe", "k": "v"},
		Ps:     proto.String(""),
	}
	proto.SetExtension(r, editionsutf8.E_ExtS, "ext")
	proto.SetExtension(r, editionsutf8.E_ExtRaw, "ext \xff")
	proto.SetExtension(r, editionsutf8.E_ExtLeaf, &editionsutf8.Leaf{Raw: "\xff"})
	return r
}

func vtcloneRich() *vtclone.Rich {
	return &vtclone.Rich{
		S: "rich", Kv: map[string]string{"a": "1", "b": "2", "c": ""},
		Pick:   &vtclone.Rich_Ol{Ol: &vtclone.Leaf{S: "ol", Tags: []string{"t"}}},
		Leaves: []*vtclone.Leaf{{B: []byte{0}}, {}},
		Nums:   []int32{-1, 0, math.MaxInt32},
		B:      []byte{},
	}
}

func vtzooTree() *vtzoo.Tree {
	return &vtzoo.Tree{
		D:      math.Copysign(0, -1),
		Leaf:   &vtzoo.Leaf{D: 1, F: math.Float32frombits(0x80000000), S: "s", B: []byte{9}},
		Leaves: []*vtzoo.Leaf{{}, {S: "second"}},
		ByName: map[string]*vtzoo.Leaf{"x": {S: "x"}, "y": {}, "z": nil},
		S:      "tree",
	}
}

// seriesResponse is a gogoproto message of about n bytes.
func seriesResponse(n int) *storepb.SeriesResponse {
	return &storepb.SeriesResponse{Result: &storepb.SeriesResponse_Series{Series: &storepb.Series{
		Labels: []storepb.Label{{Name: "__name__", Value: "up"}, {Name: "job", Value: ""}},
		Chunks: []storepb.AggrChunk{
			{MinTime: -1, MaxTime: math.MaxInt64, Raw: &storepb.Chunk{Data: make([]byte, n), Hash: 42}},
			{},
		},
	}}}
}

// dynamicTree is open3Tree as a dynamic message of its descriptor.
func dynamicTree() *dynamicpb.Message {
	b, err := proto.Marshal(open3Tree())
	if err != nil {
		panic(err)
	}
	m := newDynamicTree().(*dynamicpb.Message)
	if err := proto.Unmarshal(b, m); err != nil {
		panic(err)
	}
	return m
}

func newDynamicTree() any {
	return dynamicpb.NewMessage((*open3.Tree)(nil).ProtoReflect().Descriptor())
}

// jsonNote is no protobuf message: jsonCodec carries it.
type jsonNote struct {
	Text string
	N    int
	Tags []string
}

// jsonCodec is a codec of a name of its own, which a call chooses by its
// content-subtype.
type jsonCodec struct{}

func (jsonCodec) Name() string { return "zoojson" }

func (jsonCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := json.Marshal(v)
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (jsonCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return json.Unmarshal(data.Materialize(), v)
}

// vtprotoCodec encodes with vtprotobuf's generated methods, as
// vtprotobuf's own gRPC codec does, under a name of its own so that it
// replaces no other test's "proto" codec.
type vtprotoCodec struct{}

type vtMessage interface {
	MarshalVT() ([]byte, error)
	UnmarshalVT([]byte) error
}

func (vtprotoCodec) Name() string { return "vtproto" }

func (vtprotoCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtMessage)
	if !ok {
		return nil, fmt.Errorf("vtproto codec: %T has no MarshalVT", v)
	}
	b, err := m.MarshalVT()
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (vtprotoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(vtMessage)
	if !ok {
		return fmt.Errorf("vtproto codec: %T has no UnmarshalVT", v)
	}
	return m.UnmarshalVT(data.Materialize())
}

func init() {
	encoding.RegisterCodecV2(jsonCodec{})
	encoding.RegisterCodecV2(vtprotoCodec{})
}

// genDesc is a service whose handlers decode into the type their
// server's case chooses.
const (
	genService = "zoo.Generic"
	genUnary   = "/" + genService + "/Unary"
	genBidi    = "/" + genService + "/Bidi"
)

var genBidiDesc = grpc.StreamDesc{StreamName: "Bidi", ServerStreams: true, ClientStreams: true}

var genDesc = grpc.ServiceDesc{
	ServiceName: genService,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		h := srv.(*genHandler).begin("unary")
		defer h.end()
		in := h.c.newRequest()
		if err := dec(in); err != nil {
			h.logf("recv: %s", statusOf(err))
			return nil, err
		}
		h.received(in)
		return h.c.response(in), nil
	}}},
	Streams: []grpc.StreamDesc{{StreamName: genBidiDesc.StreamName, ServerStreams: true, ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		h := srv.(*genHandler).begin("bidi")
		defer h.end()
		for {
			in := h.c.newRequest()
			if err := ss.RecvMsg(in); err == io.EOF {
				return nil
			} else if err != nil {
				h.logf("recv: %s", statusOf(err))
				return err
			}
			h.received(in)
			if err := ss.SendMsg(h.c.response(in)); err != nil {
				h.logf("send: %s", statusOf(err))
				return err
			}
		}
	}}},
}

// genHandler serves genDesc for one case, and tells on seen what each of
// its calls received once it ended.
type genHandler struct {
	c    *genCase
	seen chan handlerLog
}

// handlerLog is what one call's handler received: a line for each
// message or error, and the messages.
type handlerLog struct {
	lines []string
	msgs  []any
}

// handlerCall is one call's handler.
type handlerCall struct {
	handlerLog
	c    *genCase
	seen chan<- handlerLog
}

func (g *genHandler) begin(method string) *handlerCall {
	h := &handlerCall{c: g.c, seen: g.seen}
	h.logf("%s handler", method)
	return h
}

func (h *handlerCall) logf(format string, args ...any) {
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
}

func (h *handlerCall) received(m any) {
	h.logf("recv %s", wireOf(m))
	h.msgs = append(h.msgs, m)
}

func (h *handlerCall) end() { h.seen <- h.handlerLog }

func (c *genCase) newRequest() any {
	if c.newReq != nil {
		return c.newReq()
	}
	return newOf(c.req())
}

func (c *genCase) newResponse() any {
	if c.newResp != nil {
		return c.newResp()
	}
	return newOf(c.req())
}

func (c *genCase) response(req any) any {
	if c.resp != nil {
		return c.resp(req)
	}
	return req
}

// newOf returns a new empty message of m's type.
func newOf(m any) any {
	switch m := m.(type) {
	case proto.Message:
		return m.ProtoReflect().New().Interface()
	case *storepb.SeriesResponse:
		return new(storepb.SeriesResponse)
	case *storepb.Label:
		return new(storepb.Label)
	case *jsonNote:
		return new(jsonNote)
	}
	panic(fmt.Sprintf("newOf(%T)", m))
}

// wireOf is m's deterministic encoding, short: in full up to 64 bytes,
// else its length and hash.
func wireOf(m any) string {
	var b []byte
	var err error
	switch m := m.(type) {
	case proto.Message:
		b, err = proto.MarshalOptions{Deterministic: true}.Marshal(m)
	case protoadapt.MessageV1:
		b, err = proto.MarshalOptions{Deterministic: true}.Marshal(protoadapt.MessageV2Of(m))
	default:
		b, err = json.Marshal(m)
	}
	switch {
	case err != nil:
		return "unencodable: " + err.Error()
	case len(b) <= 64:
		return fmt.Sprintf("%x", b)
	}
	return fmt.Sprintf("%d bytes sha256 %x", len(b), sha256.Sum256(b))
}

// equalMessages says whether a and b hold the same fields.
func equalMessages(a, b any) bool {
	switch a := a.(type) {
	case proto.Message:
		b, ok := b.(proto.Message)
		return ok && proto.Equal(a, b)
	case protoadapt.MessageV1:
		b, ok := b.(protoadapt.MessageV1)
		return ok && proto.Equal(protoadapt.MessageV2Of(a), protoadapt.MessageV2Of(b))
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func statusOf(err error) string {
	st := status.Convert(err)
	return fmt.Sprintf("%v %q", st.Code(), st.Message())
}

// genOutcome is one call's outcome: what the client saw, and what each
// handler that ran received.
type genOutcome struct {
	client   []string
	handlers []handlerLog
	// sent are the messages the client sent.
	sent []any
}

// genCall makes a call of c on cc and says what the client saw, and
// what it sent.
type genCall func(ctx context.Context, cc grpc.ClientConnInterface, c *genCase) (client []string, sent []any)

func unaryCall(ctx context.Context, cc grpc.ClientConnInterface, c *genCase) ([]string, []any) {
	req, resp := c.req(), c.newResponse()
	if err := cc.Invoke(ctx, genUnary, req, resp, c.opts...); err != nil {
		return []string{"error: " + statusOf(err)}, []any{req}
	}
	return []string{"response " + wireOf(resp)}, []any{req}
}

// bidiCall sends the case's request twice on a stream, receiving the
// response to each before the next, then closes and reads the status. A
// send or receive that fails ends the call with its status, as grpc-go's
// documents (but a send's io.EOF: the status is RecvMsg's).
func bidiCall(ctx context.Context, cc grpc.ClientConnInterface, c *genCase) (client []string, sent []any) {
	logf := func(format string, args ...any) { client = append(client, fmt.Sprintf(format, args...)) }
	s, err := cc.NewStream(ctx, &genBidiDesc, genBidi, c.opts...)
	if err != nil {
		logf("NewStream: %s", statusOf(err))
		return client, sent
	}
	for range 2 {
		req := c.req()
		if err := s.SendMsg(req); err == io.EOF {
			logf("send: EOF")
			break
		} else if err != nil {
			logf("send: %s", statusOf(err))
			return client, sent
		}
		sent = append(sent, req)
		resp := c.newResponse()
		if err := s.RecvMsg(resp); err != nil {
			logf("recv: %s", statusOf(err))
			return client, sent
		}
		logf("response %s", wireOf(resp))
	}
	if err := s.CloseSend(); err != nil {
		logf("CloseSend: %s", statusOf(err))
	}
	if err := s.RecvMsg(c.newResponse()); err == io.EOF {
		logf("end: OK")
	} else {
		logf("end: %s", statusOf(err))
	}
	return client, sent
}

// A genTransport serves h until the test ends and returns a client of it
// and a stop that returns once every handler has.
type genTransport func(t *testing.T, h *genHandler) (cc grpc.ClientConnInterface, stop func())

func (h *genHandler) maxRecv() int {
	if h.c.serverMaxRecv != 0 {
		return h.c.serverMaxRecv
	}
	return genServerMaxRecv
}

// grpcOverUnix is grpc-go's server and client over a unix socket.
func grpcOverUnix(t *testing.T, h *genHandler) (grpc.ClientConnInterface, func()) {
	path := servertest.SocketPath(t)
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(h.maxRecv()))
	srv.RegisterService(&genDesc, h)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(lis) })
	t.Cleanup(func() {
		srv.Stop()
		wg.Wait()
	})
	cc, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc, srv.GracefulStop
}

// localgrpcOverShm is localgrpc's Server and client over shm:.
func localgrpcOverShm(t *testing.T, h *genHandler) (grpc.ClientConnInterface, func()) {
	srv := localgrpc.NewServer(localgrpc.WithServerMaxRecvMsgSize(h.maxRecv()))
	srv.RegisterService(&genDesc, h)
	addr := "shm:@" + servertest.UniqueName()
	servertest.Serve(t, srv, addr)
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc, srv.GracefulStop
}

// outcome makes call of c over tr, then stops tr's server, which waits
// for the handlers.
func (tr genTransport) outcome(t *testing.T, c *genCase, call genCall) genOutcome {
	h := &genHandler{c: c, seen: make(chan handlerLog, 4)}
	cc, stop := tr(t, h)
	var out genOutcome
	out.client, out.sent = call(servertest.TimeoutCtx(t), cc, c)
	stop()
	for {
		select {
		case l := <-h.seen:
			out.handlers = append(out.handlers, l)
			continue
		default:
		}
		return out
	}
}

// TestShmGeneratorsAsGRPC: shm:'s contract is grpc-go's over a unix
// socket with the messages of every generator users run. Each of
// genCases is sent through a localgrpc Server and client over shm: and
// through grpc-go's own server and client over a unix socket, unary and
// on a bidi stream, each with a server of its own, and shm: must give
// what grpc-go gives:
//   - what the handler received: each message's deterministic encoding,
//     and proto.Equal between the two handlers' messages; each error its
//     Recv or Send returned; and whether it ran at all;
//   - what the client received back, and the status of the call;
//   - and grpc-go's handler must have received what its client sent, so
//     that the oracle is checked too.
func TestShmGeneratorsAsGRPC(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for i := range genCases {
		c := &genCases[i]
		for _, call := range []struct {
			name string
			call genCall
		}{{"unary", unaryCall}, {"bidi", bidiCall}} {
			t.Run(c.name+"/"+call.name, func(t *testing.T) {
				want := genTransport(grpcOverUnix).outcome(t, c, call.call)
				got := genTransport(localgrpcOverShm).outcome(t, c, call.call)
				compareOutcomes(t, c, got, want)
			})
		}
	}
}

// compareOutcomes fails t where shm:'s outcome got is not grpc-go's, want,
// and where grpc-go's handler did not receive what its client sent.
func compareOutcomes(t *testing.T, c *genCase, got, want genOutcome) {
	t.Helper()
	if g, w := strings.Join(got.client, "\n  "), strings.Join(want.client, "\n  "); g != w {
		t.Errorf("the client got, over shm:\n  %s\nover grpc-go:\n  %s", g, w)
	}
	if g, w := handlerLines(got.handlers), handlerLines(want.handlers); g != w {
		t.Errorf("the handler received, over shm:\n  %s\nover grpc-go:\n  %s", g, w)
	}
	if len(got.handlers) != 1 || len(want.handlers) != 1 {
		return
	}
	gotMsgs, wantMsgs := got.handlers[0].msgs, want.handlers[0].msgs
	for i, m := range wantMsgs {
		if i < len(gotMsgs) && !equalMessages(gotMsgs[i], m) {
			t.Errorf("message %d: the handler over shm: received %v, not proto.Equal to grpc-go's %v", i, gotMsgs[i], m)
		}
		// The oracle itself: a handler of the client's type received its
		// message exactly.
		if i < len(want.sent) && c.newReq == nil && !c.lossy {
			if g, w := wireOf(m), wireOf(want.sent[i]); g != w || !equalMessages(m, want.sent[i]) {
				t.Errorf("message %d: grpc-go's handler received %s, want what was sent, %s", i, g, w)
			}
		}
	}
}

func handlerLines(logs []handlerLog) string {
	if len(logs) == 0 {
		return "no handler ran"
	}
	var b strings.Builder
	for i, l := range logs {
		if i > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString(strings.Join(l.lines, "\n  "))
	}
	return b.String()
}
