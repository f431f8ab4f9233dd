package inproc

import (
	"reflect"
	"testing"

	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"
)

// TestShallowPlan checks that a shallow copy copies every field but the
// message's state and size cache, for a generated message (one move of
// the contiguous fields), for the layout of old generated code (the size
// cache last) and for a size cache between fields (field by field).
func TestShallowPlan(t *testing.T) {
	t.Run("layout=generated", func(t *testing.T) {
		src := &testgrpc.SimpleRequest{ResponseSize: 7, Payload: &testgrpc.Payload{Body: []byte("b")}, FillUsername: true}
		proto.Size(src) // sets src's size cache
		dst := &testgrpc.SimpleRequest{}
		if p := shallowPlanFor(reflect.TypeOf(dst).Elem()); p.region == nil {
			t.Fatal("a generated message is not copied in one move")
		}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("shallowCopy refused two messages of one type")
		}
		if dst.ResponseSize != 7 || dst.Payload != src.Payload || !dst.FillUsername {
			t.Errorf("copied %v, want the fields of %v", dst, src)
		}
		if v := reflect.ValueOf(dst).Elem().FieldByName("sizeCache"); v.Int() != 0 {
			t.Errorf("the size cache was copied (%d)", v.Int())
		}
	})
	type old struct {
		A                    string
		B                    []int
		XXX_NoUnkeyedLiteral struct{}
		XXX_unrecognized     []byte
		XXX_sizecache        int32
	}
	t.Run("layout=old", func(t *testing.T) {
		src, dst := &old{A: "a", B: []int{1}, XXX_unrecognized: []byte{1}, XXX_sizecache: 9}, &old{}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		if dst.A != "a" || len(dst.B) != 1 || len(dst.XXX_unrecognized) != 1 || dst.XXX_sizecache != 0 {
			t.Errorf("copied %+v from %+v, want all but the size cache", dst, src)
		}
	})
	// The layout of gogo's code without unrecognized fields: the last field
	// copied has size zero and shares its offset with the size cache.
	type zeroLast struct {
		Name                 string
		Tags                 []string
		XXX_NoUnkeyedLiteral struct{}
		XXX_sizecache        int32
	}
	t.Run("layout=zero-size-last", func(t *testing.T) {
		src, dst := &zeroLast{Name: "n", Tags: []string{"t"}, XXX_sizecache: 99}, &zeroLast{XXX_sizecache: 7}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		if dst.Name != "n" || len(dst.Tags) != 1 || dst.XXX_sizecache != 0 {
			t.Errorf("copied %+v from %+v, want all but the size cache, and that cleared", dst, src)
		}
	})
	type between struct {
		A         string
		sizeCache int32
		B         *int
	}
	t.Run("layout=cache-between", func(t *testing.T) {
		n := 3
		src, dst := &between{A: "a", sizeCache: 5, B: &n}, &between{}
		if p := shallowPlanFor(reflect.TypeOf(dst).Elem()); p.region != nil {
			t.Fatal("fields around the size cache were copied in one move")
		}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		if dst.A != "a" || dst.B != &n || dst.sizeCache != 0 {
			t.Errorf("copied %+v from %+v, want all but the size cache", dst, src)
		}
	})
}
