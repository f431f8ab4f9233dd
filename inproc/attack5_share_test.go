package inproc_test

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

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/hybrid"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

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
