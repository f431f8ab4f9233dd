package bench

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/fullstorydev/grpchan/inprocgrpc"
	"google.golang.org/grpc"
)

// serveGrpchan is impl "grpchan": fullstorydev/grpchan's in-process
// channel with its default cloner, which deep-copies every message.
func serveGrpchan(_ testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	ch := new(inprocgrpc.Channel)
	srv.registerOn(ch)
	return ch, nil // nothing to stop: each call's goroutine ends with it
}

// serveGrpchanShare is impl "grpchan-share": grpchan with shallowCloner,
// the equivalent of inproc's Share mode.
func serveGrpchanShare(_ testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	ch := new(inprocgrpc.Channel).WithCloner(shallowCloner{})
	srv.registerOn(ch)
	return ch, nil
}

// shallowCloner gives the receiver its own top-level message struct whose
// fields share memory with the sender's. It really copies: the "nocpy"
// cloner of Płotka and Petkovski, "Optimizing in-process gRPC with Go 1.23
// Iterators and Coroutines"
// (https://www.bwplotka.dev/2025/go-grpc-inprocess-iter/) assigned to its
// parameter and so never delivered a message at all, which made it look
// faster than it was.
type shallowCloner struct{}

var _ inprocgrpc.Cloner = shallowCloner{}

// Copy sets *out to *in; both must point to the same struct type.
func (shallowCloner) Copy(out, in any) error {
	o, i := reflect.ValueOf(out), reflect.ValueOf(in)
	if o.Kind() != reflect.Pointer || o.Type() != i.Type() {
		return fmt.Errorf("shallowCloner: cannot copy %T into %T", in, out)
	}
	o.Elem().Set(i.Elem())
	return nil
}

// Clone returns a new shallow copy of in, which must point to a struct.
func (shallowCloner) Clone(in any) (any, error) {
	i := reflect.ValueOf(in)
	if i.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("shallowCloner: cannot clone %T", in)
	}
	out := reflect.New(i.Type().Elem())
	out.Elem().Set(i.Elem())
	return out.Interface(), nil
}
