package handover

import (
	"reflect"

	"google.golang.org/protobuf/reflect/protoreflect"
	"sync"
	"sync/atomic"
)

// A planCache keeps plans by planKey. Those of Go types that hold one
// message (generated and legacy ones), and those of a Go type alone (no
// descriptor), of which a program has a fixed number, are kept for good. Those of other types,
// dynamic messages above all, whose descriptors a program may make without
// end (a proxy that resolves them per call, say), are kept up to
// dynamicPlans of them, then dropped all at once: a plan holds its
// descriptor, and through it the descriptor's whole file, which grpc-go
// would not keep once the call ended.
type planCache[V any] struct {
	generated sync.Map
	dynamic   sync.Map
	dynamics  atomic.Int64 // entries stored in dynamic since it was last cleared
}

const dynamicPlans = 128

// A planKey is a Go type and the message it holds: one Go type holds
// every dynamic message.
type planKey struct {
	t  reflect.Type
	md protoreflect.MessageDescriptor
}

func (c *planCache[V]) load(k planKey) (V, bool) {
	v, ok := c.generated.Load(k)
	if !ok {
		v, ok = c.dynamic.Load(k)
	}
	if !ok {
		var none V
		return none, false
	}
	return v.(V), true
}

// store keeps v for k unless another goroutine kept one first, and returns
// the one kept.
func (c *planCache[V]) store(k planKey, v V) V {
	if k.md == nil || holdsOneMessage(k.t) {
		kept, _ := c.generated.LoadOrStore(k, v)
		return kept.(V)
	}
	if c.dynamics.Add(1) > dynamicPlans {
		c.dynamic.Clear()
		c.dynamics.Store(1)
	}
	kept, _ := c.dynamic.LoadOrStore(k, v)
	return kept.(V)
}

// holdsOneMessage reports whether t holds one message only, which its
// type says: a pointer to a generated struct, or to a legacy one (no
// ProtoReflect), of which a program has a fixed number; a dynamic type
// holds any.
func holdsOneMessage(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	return isGenerated(t.Elem()) || !t.Implements(protoMessageType)
}
