package inproc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// anySvc is a hand-written service whose single unary method takes
// requests of whatever type newReq makes and answers with resp, so that
// tests can send any message type through inproc and through grpc-go.
type anySvc struct {
	newReq func() proto.Message
	resp   func(req proto.Message) (proto.Message, error)
	bidi   func(ss grpc.ServerStream) error
}

const anyUnary = "/attack.Any/Unary"
const anyBidi = "/attack.Any/Bidi"

var anyBidiDesc = &grpc.StreamDesc{StreamName: "Bidi", ServerStreams: true, ClientStreams: true}

var anyDesc = &grpc.ServiceDesc{
	ServiceName: "attack.Any",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Unary", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		s := srv.(*anySvc)
		in := s.newReq()
		if err := dec(in); err != nil {
			return nil, err
		}
		if s.resp == nil {
			return &emptypb.Empty{}, nil
		}
		return s.resp(in)
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Bidi", ServerStreams: true, ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		return srv.(*anySvc).bidi(ss)
	}}},
}

// catch runs f and turns a panic into an error.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}

// anyReference returns a grpc-go connection to svc over bufconn.
func anyReference(t testing.TB, svc *anySvc) *grpc.ClientConn {
	t.Helper()
	return realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(anyDesc, svc) }, nil, nil)
}

// anyAgree runs run over grpc-go and then, as a subtest, in every mode,
// handing it each time serve, which puts an anySvc on that side and
// returns a connection to it, and fails each mode whose result is not
// grpc-go's. It returns grpc-go's result.
func anyAgree(t *testing.T, run func(t *testing.T, serve func(*anySvc) grpc.ClientConnInterface) string) string {
	t.Helper()
	want := run(t, func(s *anySvc) grpc.ClientConnInterface { return anyReference(t, s) })
	forEachMode(t, func(t *testing.T, m testMode) {
		got := run(t, func(s *anySvc) grpc.ClientConnInterface {
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, s)
			return ch
		})
		switch {
		case got == want:
		case strings.Contains(want, "\n"):
			t.Errorf("\ninproc:\n%s\ngrpc-go:\n%s", got, want)
		default:
			t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
		}
	})
	return want
}

// crashLines picks from a child's output the lines that say how it failed.
func crashLines(out []byte) string {
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.Contains(l, "DATA RACE") ||
			strings.Contains(l, "localgrpc/inproc.") && len(keep) > 0 && len(keep) < 3 {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep[:min(len(keep), 4)], "\n")
}
