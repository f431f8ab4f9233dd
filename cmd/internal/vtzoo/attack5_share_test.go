package vtzoo_test

// attack5: Share copy mode with vtprotobuf messages. The receiver's safe
// changes (assign, append, map changes, merging Unmarshal of lists and
// maps) must leave the sender's message untouched and race-free, as over
// grpc-go (the oracle), where nothing is shared.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/vtzoo"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

func a5VTTree() *vtzoo.Tree {
	return &vtzoo.Tree{D: 1, S: "s", Leaf: &vtzoo.Leaf{S: "leaf", B: []byte("lb")},
		Leaves: []*vtzoo.Leaf{{S: "l0", B: []byte("b0")}, {S: "l1"}},
		ByName: map[string]*vtzoo.Leaf{"a": {S: "A"}, "b": {S: "B", B: []byte("bb")}}}
}

var a5VTMutations = map[string]func(t *testing.T, x *vtzoo.Tree){
	"go-assign": func(t *testing.T, x *vtzoo.Tree) {
		x.D, x.S, x.Leaf, x.Leaves, x.ByName = 9, "x", &vtzoo.Leaf{}, nil, nil
	},
	"go-append": func(t *testing.T, x *vtzoo.Tree) {
		x.Leaves = append(x.Leaves, &vtzoo.Leaf{S: "z"})
		x.Leaves[0] = &vtzoo.Leaf{S: "own"} // own array after the append
	},
	"go-map": func(t *testing.T, x *vtzoo.Tree) {
		x.ByName["a"] = &vtzoo.Leaf{S: "other"}
		x.ByName["new"] = &vtzoo.Leaf{}
		delete(x.ByName, "b")
	},
	"unmarshalvt-merge-lists-maps": func(t *testing.T, x *vtzoo.Tree) {
		b, _ := (&vtzoo.Tree{S: "m", Leaves: []*vtzoo.Leaf{{S: "ml"}}, ByName: map[string]*vtzoo.Leaf{"a": {S: "MA"}, "z": {}}}).MarshalVT()
		if err := x.UnmarshalVT(b); err != nil {
			t.Error(err)
		}
	},
	"proto-merge-lists-maps": func(t *testing.T, x *vtzoo.Tree) {
		proto.Merge(x, &vtzoo.Tree{S: "m", Leaves: []*vtzoo.Leaf{{S: "ml"}}, ByName: map[string]*vtzoo.Leaf{"a": {S: "MA"}, "z": {}}})
	},
	"reset": func(t *testing.T, x *vtzoo.Tree) { proto.Reset(x) },
}

func a5VTRead(m proto.Message, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, _ = proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if t, ok := m.(*vtzoo.Tree); ok {
				_, _ = t.MarshalVT()
			}
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

func a5VTRun(t *testing.T, serve func(*grpc.ServiceDesc) grpc.ClientConnInterface, mut func(*testing.T, *vtzoo.Tree), dir string) string {
	var sent, want *vtzoo.Tree
	stop := make(chan struct{})
	var done <-chan struct{}
	desc := &grpc.ServiceDesc{ServiceName: "a5.VT", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{{MethodName: "M",
		Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := &vtzoo.Tree{}
			if err := dec(in); err != nil {
				return nil, err
			}
			if dir == "request" {
				time.Sleep(time.Millisecond)
				mut(t, in)
				return &vtzoo.Tree{}, nil
			}
			sent = a5VTTree()
			want = sent.CloneVT()
			done = a5VTRead(sent, stop)
			return sent, nil
		}}}}
	cc := serve(desc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := &vtzoo.Tree{}
	if dir == "request" {
		sent = a5VTTree()
		want = sent.CloneVT()
		req = sent
		done = a5VTRead(sent, stop)
	}
	reply := &vtzoo.Tree{}
	err := cc.Invoke(ctx, "/a5.VT/M", req, reply)
	if err == nil && dir == "response" {
		time.Sleep(time.Millisecond)
		mut(t, reply)
	}
	time.Sleep(time.Millisecond)
	close(stop)
	if done != nil {
		<-done
	}
	if err != nil {
		return "call: " + err.Error()
	}
	if !proto.Equal(sent, want) {
		return fmt.Sprintf("sender's %s changed: got %v want %v", dir, sent, want)
	}
	return ""
}

func TestAttack5VTShareSafeMutations(t *testing.T) {
	for name, mut := range a5VTMutations {
		for _, dir := range []string{"request", "response"} {
			t.Run(name+"/"+dir, func(t *testing.T) {
				want := a5VTRun(t, func(d *grpc.ServiceDesc) grpc.ClientConnInterface {
					return servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { r.RegisterService(d, struct{}{}) }, nil)
				}, mut, dir)
				if want != "" {
					t.Fatalf("oracle: %s", want)
				}
				for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
					got := a5VTRun(t, func(d *grpc.ServiceDesc) grpc.ClientConnInterface {
						ch := inproc.New(inproc.WithCopy(inproc.Share), inproc.WithExecution(exec))
						t.Cleanup(ch.Stop)
						ch.RegisterService(d, struct{}{})
						return ch
					}, mut, dir)
					if got != want {
						t.Errorf("share/%v: grpc-go leaves the sender's message untouched; inproc: %s", exec, got)
					}
				}
			})
		}
	}
}
