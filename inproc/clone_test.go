package inproc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
)

// Receivers that keep what they received, in every way a program may, while
// the sender reuses one message and changes it in place, and the copy each
// receiver's message came from goes back for reuse (handover.Direction.Release): what
// each receiver holds must stay as it was received, plus its own changes,
// as over grpc-go.

// keepSender sends n messages of one google.rpc.Status, changed in place
// between sends: its nested Any's bytes are written over, its list is cut
// and grown over its own array.
func keepSender(n int, send func(proto.Message) error) error {
	st := &rpcstatus.Status{Details: []*anypb.Any{{Value: make([]byte, 4)}}}
	for i := range n {
		st.Code = int32(i)
		st.Message = fmt.Sprint("m", i)
		st.Details[0].TypeUrl = fmt.Sprint("t", i)
		for j := range st.Details[0].Value {
			st.Details[0].Value[j] = byte(i + j)
		}
		st.Details = st.Details[:1]
		if i%3 == 0 {
			st.Details = append(st.Details, &anypb.Any{TypeUrl: "extra", Value: []byte{byte(i)}})
		}
		if err := send(st); err != nil {
			return err
		}
	}
	return nil
}

// kept is what a receiver keeps of one message: the message, its list,
// its first nested message, a part of that one's bytes.
type kept struct {
	m    proto.Message
	list []*anypb.Any
	any0 *anypb.Any
	part []byte
}

// keepReceive receives into a message of the generated type, or every
// fifth time into a dynamic one of the same descriptor, keeps parts of it
// and changes every other one.
func keepReceive(i int, recv func(any) error) (kept, error) {
	if i%5 == 4 {
		d := dynamicpb.NewMessage((&rpcstatus.Status{}).ProtoReflect().Descriptor())
		if err := recv(d); err != nil {
			return kept{}, err
		}
		return kept{m: d}, nil
	}
	r := &rpcstatus.Status{}
	if err := recv(r); err != nil {
		return kept{}, err
	}
	if len(r.Details) == 0 || len(r.Details[0].Value) < 3 {
		return kept{}, fmt.Errorf("message %d arrived as %v", i, r)
	}
	k := kept{m: r, list: r.Details, any0: r.Details[0], part: r.Details[0].Value[1:3]}
	if i%2 == 0 {
		r.Details[0].Value[0] ^= 0xff
		r.Details = append(r.Details, &anypb.Any{TypeUrl: "mine"})
		r.Message += "!"
		k.part[1] = 0xee
	}
	return k, nil
}

// dumpKept describes what a receiver holds.
func dumpKept(ks []kept) string {
	var b strings.Builder
	for i, k := range ks {
		fmt.Fprintf(&b, "%d: %s", i, wireOf(k.m))
		if k.any0 != nil {
			fmt.Fprintf(&b, " list %d any0 %q %x part %x", len(k.list), k.any0.TypeUrl, k.any0.Value, k.part)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// keepBidi is a handler that keeps every request and answers each with
// a message of its own reused, then tells done what it keeps.
func keepBidi(n int, done chan<- string) func(grpc.ServerStream) error {
	return func(ss grpc.ServerStream) error {
		var ks []kept
		i := 0
		err := keepSender(n, func(m proto.Message) error {
			k, err := keepReceive(i, ss.RecvMsg)
			if err != nil {
				return err
			}
			i++
			ks = append(ks, k)
			return ss.SendMsg(m)
		})
		done <- dumpKept(ks)
		return err
	}
}

// keepClient runs streams concurrent bidi streams of n messages each on
// cc, and unary calls between, and returns what every receiver holds at
// the end.
func keepClient(t *testing.T, cc grpc.ClientConnInterface, n, streams int, done chan string) string {
	var wg sync.WaitGroup
	out := make([]string, streams)
	unary := make([]string, streams)
	for s := range streams {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*waitLimit)
			defer cancel()
			cs, err := cc.NewStream(ctx, anyBidiDesc, anyBidi)
			if err != nil {
				out[s] = err.Error()
				return
			}
			var ks []kept
			var calls []kept
			i := 0
			err = keepSender(n, func(m proto.Message) error {
				if err := cs.SendMsg(m); err != nil {
					return err
				}
				k, err := keepReceive(i, cs.RecvMsg)
				if err != nil {
					return err
				}
				i++
				ks = append(ks, k)
				if i%7 == 0 { // a unary call of the same type: its request takes a spare copy
					c, err := keepReceive(i, func(reply any) error {
						return cc.Invoke(ctx, anyUnary, m, reply)
					})
					if err != nil {
						return err
					}
					calls = append(calls, c)
				}
				return nil
			})
			if err == nil {
				err = cs.CloseSend()
			}
			if err == nil {
				if err = cs.RecvMsg(&rpcstatus.Status{}); errors.Is(err, io.EOF) {
					err = nil
				}
			}
			out[s] = fmt.Sprintf("client err=%v\n%s", err, dumpKept(ks))
			unary[s] = dumpKept(calls)
		})
	}
	wg.Wait()
	var handlers []string
	for range streams {
		handlers = append(handlers, receive(t, done, "a handler's dump"))
	}
	// The handlers' dumps are alike: every stream sends the same.
	return strings.Join(out, "\n") + "\nunary:\n" + strings.Join(unary, "\n") + "\nhandlers:\n" + strings.Join(handlers, "\n")
}

func keepSvc(n int, done chan string, handlerKept *[]kept, mu *sync.Mutex) *anySvc {
	return &anySvc{
		newReq: func() proto.Message { return &rpcstatus.Status{} },
		resp: func(req proto.Message) (proto.Message, error) {
			mu.Lock()
			*handlerKept = append(*handlerKept, kept{m: req})
			mu.Unlock()
			return req, nil
		},
		bidi: keepBidi(n, done),
	}
}

// TestCloneReceiversKeepWhatTheyGot compares what every receiver holds
// at the end with grpc-go's over bufconn, in every mode, with several
// streams of the same method and type at once.
func TestCloneReceiversKeepWhatTheyGot(t *testing.T) {
	const n, streams = 60, 4
	run := func(cc func(*anySvc) grpc.ClientConnInterface) string {
		done := make(chan string, streams)
		var mu sync.Mutex
		var unaryKept []kept
		got := keepClient(t, cc(keepSvc(n, done, &unaryKept, &mu)), n, streams, done)
		mu.Lock()
		defer mu.Unlock()
		// The unary handler's requests, in no set order: only their count
		// and that each is one the client sent.
		bad := 0
		for _, k := range unaryKept {
			st := k.m.(*rpcstatus.Status)
			if want := fmt.Sprint("m", st.Code); st.Message != want || st.Details[0].TypeUrl != fmt.Sprint("t", st.Code) || st.Details[0].Value[0] != byte(st.Code) {
				bad++
			}
		}
		return got + fmt.Sprintf("\nunary handler kept %d, %d changed", len(unaryKept), bad)
	}
	want := run(func(s *anySvc) grpc.ClientConnInterface { return anyReference(t, s) })
	forEachMode(t, func(t *testing.T, m testMode) {
		if isShare(t, m) {
			t.Skip("with Share the sender must not change what it sent")
		}
		got := run(func(s *anySvc) grpc.ClientConnInterface {
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, s)
			return ch
		})
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("line %d differs:\ninproc:  %s\ngrpc-go: %s", i, gl[i], wl[i])
				}
			}
			t.Fatalf("inproc %d lines, grpc-go %d", len(gl), len(wl))
		}
	})
}

// With Clone, a stream's receiver gives back the copy its message's top
// level came from (handover.Direction.Release), and the next message of
// the type is copied into it. These tests keep every message a receiver got, and
// pieces of it (nested messages, lists, bytes), while senders reuse one
// message and change it in place, on several streams and methods of the
// one type at once, with interceptors and stats handlers that keep what
// they see, receivers of other types and receivers that fail: nothing a
// receiver holds may change but by its own hand.

// sentFlat is the i-th message a sender sends.
func sentFlat(tag string, i int) *flat3.Flat {
	m := &flat3.Flat{}
	fillSentFlat(m, tag, i)
	return m
}

// fillSentFlat makes m the i-th message, reusing what m holds
// (arrays, nested messages) and writing into it in place, as a sender
// that reuses its message does.
func fillSentFlat(m *flat3.Flat, tag string, i int) {
	m.S = fmt.Sprintf("%s-%d", tag, i)
	m.B = append(m.B[:0], byte(i), byte(i>>8), 0xaa, byte(len(tag)))
	m.Names = m.Names[:0]
	for j := range i%3 + 1 {
		m.Names = append(m.Names, fmt.Sprintf("%s-n%d-%d", tag, i, j))
	}
	if m.Leaf == nil {
		m.Leaf = &flat3.Leaf{}
	}
	fillSentLeaf(m.Leaf, tag, i, 0)
	n := i % 4
	for len(m.Leaves) < n {
		m.Leaves = append(m.Leaves, &flat3.Leaf{})
	}
	m.Leaves = m.Leaves[:n]
	for j, l := range m.Leaves {
		fillSentLeaf(l, tag, i, j+1)
	}
	m.D = float64(i) + 0.5
	if i%5 == 0 {
		m.D = math.Copysign(0, -1)
	}
	m.F = float32(i)
	m.I = int32(i)
	if i%2 == 0 {
		if m.Child == nil {
			m.Child = &flat3.Flat{}
		}
		m.Child.S = fmt.Sprintf("%s-child-%d", tag, i)
		if m.Child.Leaf == nil {
			m.Child.Leaf = &flat3.Leaf{}
		}
		fillSentLeaf(m.Child.Leaf, tag, i, 9)
	} else {
		m.Child = nil
	}
}

func fillSentLeaf(l *flat3.Leaf, tag string, i, j int) {
	l.S = fmt.Sprintf("%s-leaf-%d-%d", tag, i, j)
	l.B = append(l.B[:0], byte(i), byte(j), 0x55)
	l.Tags = append(l.Tags[:0], fmt.Sprintf("t%d", i), fmt.Sprintf("u%d", j))
	l.D = float64(i*10 + j)
}

// keptParts is what a receiver keeps of one message.
type keptParts struct {
	i      int
	m      proto.Message // what it received into
	leaf   *flat3.Leaf
	leaves []*flat3.Leaf
	b      []byte // a part of the bytes
	names  []string
	tags   []string // of the child's leaf
	mine   bool     // the receiver changed it
}

// keepParts keeps parts of m, the i-th message received, and changes
// every other one as its receiver may (changeAsReceiver).
func keepParts(i int, m proto.Message) keptParts {
	k := keptParts{i: i, m: m}
	r, ok := m.(*flat3.Flat)
	if !ok {
		return k
	}
	k.leaf, k.leaves, k.b, k.names = r.Leaf, r.Leaves, r.B[1:3], r.Names
	if r.Child != nil {
		k.tags = r.Child.Leaf.Tags
	}
	if i%2 == 1 {
		k.mine = true
		changeAsReceiver(r)
	}
	return k
}

// changeAsReceiver is what a receiver does to the odd messages it got:
// it writes into its bytes, list and nested message and appends to them.
func changeAsReceiver(r *flat3.Flat) {
	r.B[0] ^= 0xff
	r.Names[0] = "mine"
	r.Names = append(r.Names, "appended")
	r.Leaf.S += "!"
	r.Leaf.B[0] ^= 0xff
	r.Leaves = append(r.Leaves, &flat3.Leaf{S: "added"})
	r.S += "?"
}

// checkKept tells how k differs from what the i-th message of tag,
// as received and then changed by its receiver, should be.
func checkKept(tag string, k keptParts) string {
	want := sentFlat(tag, k.i)
	wantLeaves := want.Leaves
	if k.mine {
		changeAsReceiver(want)
	}
	switch m := k.m.(type) {
	case *flat3.Flat:
		var diffs []string
		if !proto.Equal(m, want) {
			diffs = append(diffs, fmt.Sprintf("message %v, want %v", m, want))
		}
		if m.Child == nil && want.Child != nil || m.Child != nil && want.Child == nil {
			diffs = append(diffs, "child presence")
		}
		if !proto.Equal(k.leaf, want.Leaf) {
			diffs = append(diffs, fmt.Sprintf("kept leaf %v, want %v", k.leaf, want.Leaf))
		}
		if len(k.leaves) != len(wantLeaves) {
			diffs = append(diffs, fmt.Sprintf("kept leaves %d, want %d", len(k.leaves), len(wantLeaves)))
		} else {
			for j := range k.leaves {
				if !proto.Equal(k.leaves[j], wantLeaves[j]) {
					diffs = append(diffs, fmt.Sprintf("kept leaves[%d] %v, want %v", j, k.leaves[j], wantLeaves[j]))
				}
			}
		}
		if !bytes.Equal(k.b, want.B[1:3]) {
			diffs = append(diffs, fmt.Sprintf("kept bytes %x, want %x", k.b, want.B[1:3]))
		}
		if len(k.names) > len(want.Names) || strings.Join(k.names, ",") != strings.Join(want.Names[:len(k.names)], ",") {
			diffs = append(diffs, fmt.Sprintf("kept names %q, want %q", k.names, want.Names))
		}
		if want.Child != nil && strings.Join(k.tags, ",") != strings.Join(want.Child.Leaf.Tags, ",") {
			diffs = append(diffs, fmt.Sprintf("kept child tags %q, want %q", k.tags, want.Child.Leaf.Tags))
		}
		return strings.Join(diffs, "; ")
	default:
		// A receiver of another type: the same bytes as the message sent,
		// but for the order of its unknown fields, which is the order
		// they came in (a dynamic message's sender encodes its fields in
		// no set order).
		got, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		w, _ := proto.MarshalOptions{Deterministic: true}.Marshal(sentFlat(tag, k.i))
		back := &flat3.Flat{}
		if !bytes.Equal(got, w) && (proto.Unmarshal(got, back) != nil || !proto.Equal(back, sentFlat(tag, k.i))) {
			return fmt.Sprintf("%T %x, want %x", m, got, w)
		}
		return ""
	}
}

// recvInto is what the i-th receive of a receiver decodes into:
// mostly the generated type, sometimes a dynamic message of its
// descriptor or another generated type.
func recvInto(i int) proto.Message {
	switch {
	case i%7 == 3:
		return dynamicpb.NewMessage((&flat3.Flat{}).ProtoReflect().Descriptor())
	case i%11 == 5:
		return &flat3.Leaf{} // fields 1 to 3 alike, the rest unknown
	}
	return &flat3.Flat{}
}

// receiveAndCheck receives n messages by recv and checks what it kept
// once all arrived.
func receiveAndCheck(tag string, n int, recv func(proto.Message) error) string {
	var kept []keptParts
	for i := range n {
		m := recvInto(i)
		if err := recv(m); err != nil {
			return fmt.Sprintf("%s: receive %d: %v", tag, i, err)
		}
		kept = append(kept, keepParts(i, m))
	}
	bad := checkAllKept(tag, kept)
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	return strings.Join(bad, "\n")
}

// checkAllKept tells, a line each, how the messages of tag in kept differ
// from what they should be (checkKept).
func checkAllKept(tag string, kept []keptParts) []string {
	var bad []string
	for _, k := range kept {
		if d := checkKept(tag, k); d != "" {
			bad = append(bad, fmt.Sprintf("%s #%d: %s", tag, k.i, d))
		}
	}
	return bad
}

// sendReused sends n messages by send, one message reused.
func sendReused(tag string, n int, send func(proto.Message) error) error {
	m := &flat3.Flat{}
	for i := range n {
		fillSentFlat(m, tag, i)
		if err := send(m); err != nil {
			return fmt.Errorf("%s: send %d: %w", tag, i, err)
		}
	}
	return nil
}

var releaseKeepDesc = &grpc.ServiceDesc{
	ServiceName: "release.Keep",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{
		{StreamName: "Bidi", ServerStreams: true, ClientStreams: true, Handler: releaseKeepHandler("bidi")},
		{StreamName: "Down", ServerStreams: true, Handler: releaseKeepHandler("down")},
		{StreamName: "Up", ClientStreams: true, Handler: releaseKeepHandler("up")},
	},
}

// releaseKeepSvc is where the handlers report what they found.
type releaseKeepSvc struct {
	n       int
	reports chan string
}

func releaseKeepHandler(kind string) func(any, grpc.ServerStream) error {
	return func(srv any, ss grpc.ServerStream) error {
		s := srv.(*releaseKeepSvc)
		switch kind {
		case "bidi":
			// Receives one, sends one, each side its own tag.
			var kept []keptParts
			i := 0
			out := &flat3.Flat{}
			for {
				m := recvInto(i)
				err := ss.RecvMsg(m)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					s.reports <- "bidi handler: " + err.Error()
					return err
				}
				kept = append(kept, keepParts(i, m))
				fillSentFlat(out, "bidi-down", i)
				if err := ss.SendMsg(out); err != nil {
					s.reports <- "bidi handler send: " + err.Error()
					return err
				}
				i++
			}
			s.reports <- fmt.Sprintf("bidi handler got %d %s", len(kept), strings.Join(checkAllKept("bidi-up", kept), "\n"))
			return nil
		case "down":
			m := &flat3.Flat{}
			if err := ss.RecvMsg(m); err != nil {
				return err
			}
			return sendReused("down", s.n, func(m proto.Message) error { return ss.SendMsg(m) })
		default: // up
			s.reports <- "up handler " + receiveAndCheck("up", s.n, func(m proto.Message) error { return ss.RecvMsg(m) })
			if err := ss.RecvMsg(&flat3.Flat{}); !errors.Is(err, io.EOF) {
				return status.Errorf(codes.Internal, "after the last: %v", err)
			}
			return ss.SendMsg(&flat3.Flat{S: "done"})
		}
	}
}

// seenKeeper keeps every message interceptors and stats handlers
// see, and checks at the end that each still is as it was seen.
type seenKeeper struct {
	mu   sync.Mutex
	seen []seenMsg
}

type seenMsg struct {
	m    proto.Message
	wire []byte
}

func (k *seenKeeper) keep(m any) {
	pm, ok := m.(proto.Message)
	if !ok {
		return
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(pm)
	if err != nil {
		return
	}
	k.mu.Lock()
	k.seen = append(k.seen, seenMsg{m: pm, wire: b})
	k.mu.Unlock()
}

// keepEven keeps m, received with err, if it is an even message
// (flat3.Flat with an even I), which no receiver changes.
func (k *seenKeeper) keepEven(m any, err error) {
	if f, ok := m.(*flat3.Flat); ok && err == nil && f.I%2 == 0 {
		k.keep(m)
	}
}

// changed counts the messages kept whose encoding is not what it was
// when seen; a receiver's own changes to its message count too, so the
// keeper only sees messages of the even receives (which no receiver
// changes: keepParts changes the odd ones) through an interceptor, or
// checks only the payloads it took a copy of.
func (k *seenKeeper) changed() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, s := range k.seen {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(s.m)
		if !bytes.Equal(b, s.wire) {
			n++
		}
	}
	return n
}

// payloadKeeper is a stats.Handler that keeps, for every payload
// received, the message and its encoding then: a receiver's own changes
// come after, so it keeps only the messages no receiver changes (the
// even ones: keepParts changes the odd).
type payloadKeeper struct{ k seenKeeper }

func (h *payloadKeeper) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (h *payloadKeeper) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InPayload); ok {
		h.k.keepEven(in.Payload, nil)
	}
}
func (h *payloadKeeper) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h *payloadKeeper) HandleConn(context.Context, stats.ConnStats) {}

// keepingServerStream and keepingClientStream wrap a stream so that
// every even message it receives is kept by k.
type keepingServerStream struct {
	grpc.ServerStream
	k *seenKeeper
}

func (s *keepingServerStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	s.k.keepEven(m, err)
	return err
}

type keepingClientStream struct {
	grpc.ClientStream
	k *seenKeeper
}

func (s *keepingClientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.k.keepEven(m, err)
	return err
}

// releaseRun runs, at once, streams of the three methods (every
// one carrying flat3.Flat), and reports what every receiver and keeper
// found.
func releaseRun(t *testing.T, cc grpc.ClientConnInterface, svc *releaseKeepSvc, streams int) string {
	n := svc.n
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitLimit)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]string, 3*streams)
	for s := range streams {
		wg.Go(func() { // bidi
			cs, err := cc.NewStream(ctx, &releaseKeepDesc.Streams[0], "/release.Keep/Bidi")
			if err != nil {
				results[3*s] = err.Error()
				return
			}
			sent := make(chan error, 1)
			go func() {
				err := sendReused("bidi-up", n, func(m proto.Message) error { return cs.SendMsg(m) })
				if err == nil {
					err = cs.CloseSend()
				}
				sent <- err
			}()
			r := receiveAndCheck("bidi-down", n, func(m proto.Message) error { return cs.RecvMsg(m) })
			if err := cs.RecvMsg(&flat3.Flat{}); !errors.Is(err, io.EOF) {
				r += fmt.Sprintf(" end: %v", err)
			}
			if err := <-sent; err != nil {
				r += fmt.Sprintf(" send: %v", err)
			}
			results[3*s] = "bidi client " + r
		})
		wg.Go(func() { // server streaming
			cs, err := cc.NewStream(ctx, &releaseKeepDesc.Streams[1], "/release.Keep/Down")
			if err == nil {
				err = cs.SendMsg(&flat3.Flat{S: "start"})
			}
			if err == nil {
				err = cs.CloseSend()
			}
			if err != nil {
				results[3*s+1] = err.Error()
				return
			}
			r := receiveAndCheck("down", n, func(m proto.Message) error { return cs.RecvMsg(m) })
			if err := cs.RecvMsg(&flat3.Flat{}); !errors.Is(err, io.EOF) {
				r += fmt.Sprintf(" end: %v", err)
			}
			results[3*s+1] = "down client " + r
		})
		wg.Go(func() { // client streaming
			cs, err := cc.NewStream(ctx, &releaseKeepDesc.Streams[2], "/release.Keep/Up")
			if err != nil {
				results[3*s+2] = err.Error()
				return
			}
			err = sendReused("up", n, func(m proto.Message) error { return cs.SendMsg(m) })
			if err == nil {
				err = cs.CloseSend()
			}
			reply := &flat3.Flat{}
			if err == nil {
				err = cs.RecvMsg(reply)
			}
			results[3*s+2] = fmt.Sprintf("up client %v %q", err, reply.S)
		})
	}
	wg.Wait()
	var reports []string
	for range 2 * streams { // one per bidi and per up handler
		reports = append(reports, receive(t, svc.reports, "a handler's report"))
	}
	slices.Sort(reports)
	return strings.Join(results, "\n") + "\nhandlers:\n" + strings.Join(reports, "\n")
}

// TestReleasedCopiesNeverReachReceivers runs releaseRun over grpc-go and
// in every mode (with Share, every call takes Clone), with interceptors
// and stats handlers on both sides that keep the messages they see: what
// each receiver, interceptor and stats handler kept must stay as it got
// it while released copies are reused for the next messages.
func TestReleasedCopiesNeverReachReceivers(t *testing.T) {
	// More messages than a window and a Spare's ring take to make.
	const n, streams = 300, 3
	ref := &releaseKeepSvc{n: n, reports: make(chan string, 16)}
	want := releaseRun(t, realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(releaseKeepDesc, ref) }, nil, nil), ref, streams)
	forEachMode(t, func(t *testing.T, m testMode) {
		var extra []inproc.Option
		if isShare(t, m) {
			// The senders reuse their messages, which Share forbids: every
			// call takes Clone by a call option instead, which the
			// handler's side must follow too (its Release included).
			extra = append(extra, inproc.WithDefaultCallOptions(inproc.CallCopy(inproc.Clone)))
		}
		var ik seenKeeper
		sh, ch2 := &payloadKeeper{}, &payloadKeeper{}
		svc := &releaseKeepSvc{n: n, reports: make(chan string, 16)}
		opts := append(extra,
			inproc.WithServerStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				return h(srv, &keepingServerStream{ServerStream: ss, k: &ik})
			}),
			inproc.WithClientStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				cs, err := streamer(ctx, desc, cc, method, opts...)
				if err != nil {
					return nil, err
				}
				return &keepingClientStream{ClientStream: cs, k: &ik}, nil
			}),
			inproc.WithServerStatsHandler(sh), inproc.WithClientStatsHandler(ch2))
		c := newChannel(t, m, opts...)
		c.RegisterService(releaseKeepDesc, svc)
		got := releaseRun(t, c, svc, streams)
		if got != want {
			t.Errorf("\ninproc:\n%s\ngrpc-go:\n%s", got, want)
		}
		// Kept by interceptors and stats handlers: the even messages,
		// which no receiver changes.
		if k := ik.changed() + sh.k.changed() + ch2.k.changed(); k != 0 {
			t.Errorf("%d messages kept by interceptors and stats handlers changed after they saw them", k)
		}
		if len(ik.seen) == 0 || len(sh.k.seen) == 0 || len(ch2.k.seen) == 0 {
			t.Errorf("keepers saw %d, %d, %d messages", len(ik.seen), len(sh.k.seen), len(ch2.k.seen))
		}
	})
}

// listFunc is a ListStrings server whose List is a function.
type listFunc struct {
	listv1.UnimplementedListStringsServer
	list func(*listv1.ListRequest, grpc.ServerStreamingServer[listv1.ListResponse]) error
}

func (l *listFunc) List(req *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	return l.list(req, s)
}

// TestCloneReceivedMessagesStayTheReceivers checks, in every mode, that
// each message a stream's receiver got stays as it got it and as it then
// changed it, while the sender reuses one message for all it sends and
// more messages follow: with Clone, the copy a receiver took its message
// from is reused for a later one, which must not reach what it gave.
func TestCloneReceivedMessagesStayTheReceivers(t *testing.T) {
	const n = 300
	strs := func(i int) []string { return []string{fmt.Sprintf("m%d-0", i), fmt.Sprintf("m%d-1", i)} }
	forEachMode(t, func(t *testing.T, m testMode) {
		if isShare(t, m) {
			t.Skip("with Share the sender keeps its messages as they are, as gRPC's rule says")
		}
		ch := newChannel(t, m)
		listv1.RegisterListStringsServer(ch, &listFunc{list: func(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
			resp := &listv1.ListResponse{}
			for i := range n {
				resp.Strings = append(resp.Strings[:0], strs(i)...)
				if err := s.Send(resp); err != nil {
					return err
				}
			}
			return nil
		}})
		stream, err := listv1.NewListStringsClient(ch).List(timeoutCtx(t), &listv1.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []*listv1.ListResponse
		for {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			i := len(got)
			if !slices.Equal(r.Strings, strs(i)) {
				t.Fatalf("message %d arrived as %q, want %q", i, r.Strings, strs(i))
			}
			if i%2 == 0 { // the others are kept as they came
				r.Strings[0] = "changed"
				r.Strings = append(r.Strings, "added")
			}
			got = append(got, r)
		}
		if len(got) != n {
			t.Fatalf("received %d messages, want %d", len(got), n)
		}
		for i, r := range got {
			want := strs(i)
			if i%2 == 0 {
				want = []string{"changed", want[1], "added"}
			}
			if !slices.Equal(r.Strings, want) {
				t.Fatalf("message %d is %q once all arrived, want %q", i, r.Strings, want)
			}
		}

		// Requests too: a bidi handler keeps what it received while the
		// client sends on.
		result := make(chan error, 1)
		client, _ := newEcho(t, m, &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			var kept []*echov1.EchoRequest
			for {
				req, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				req.Text += "!"
				kept = append(kept, req)
			}
			for i, req := range kept {
				if want := fmt.Sprintf("r%d!", i); req.Text != want {
					result <- fmt.Errorf("request %d is %q once all arrived, want %q", i, req.Text, want)
					return nil
				}
			}
			result <- nil
			return nil
		}})
		bidi, err := client.Update(timeoutCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		req := &echov1.EchoRequest{}
		for i := range n {
			req.Text = fmt.Sprintf("r%d", i)
			if err := bidi.Send(req); err != nil {
				t.Fatal(err)
			}
		}
		if err := bidi.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := bidi.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("Recv after the handler returned: %v, want io.EOF", err)
		}
		if err := receive(t, result, "the handler's check"); err != nil {
			t.Fatal(err)
		}
	})
}
