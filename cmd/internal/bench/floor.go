package bench

import (
	"context"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// floorClients is impl "floor": the least that any channel honouring the
// in-process contract through generated code must pay, against which the
// inproc modes are measured.
//
//   - ListStrings: what the generated Recv does whatever carries the
//     message, a new response and a copy of its field, with no hand-off
//     between goroutines. A channel that hands messages to another
//     goroutine can only come near it when the two overlap on two CPUs.
//   - Unary: a go statement running the handler, as Isolated execution
//     must so that the client can return when its context ends, and one
//     channel hand-off of the result back.
//
// A ping-pong round has no such floor of its own: it is measured against
// chan, the hand-written goroutine and channel client.
func floorClients(_ testing.TB, srv servers) (clients, error) {
	return clients{
		pushList: func(ctx context.Context, req *listv1.ListRequest, send func(*listv1.ListResponse) error) error {
			return srv.list.List(req, &pushStream{ctx: ctx, send: func(m *listv1.ListResponse) error {
				received := new(listv1.ListResponse)
				received.Strings = m.Strings
				return send(received)
			}})
		},
		get: floorEcho{srv.echo},
	}, nil
}

const noFloor = "a ping-pong round has no floor of its own: compare with chan"

// floorEcho runs Get on a goroutine of its own and waits for its result.
type floorEcho struct{ srv echov1.EchoServer }

type floorResult struct {
	resp *echov1.EchoResponse
	err  error
}

func (c floorEcho) Get(ctx context.Context, in *echov1.EchoRequest, _ ...grpc.CallOption) (*echov1.EchoResponse, error) {
	done := make(chan floorResult, 1)
	go func() {
		resp, err := c.srv.Get(ctx, in)
		done <- floorResult{resp, err}
	}()
	r := <-done
	return r.resp, r.err
}
