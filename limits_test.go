package localgrpc_test

import (
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestSizeLimitsEveryTransport sets the server's message size limits once
// and checks that every transport applies them alike: a request or a
// response over the limit fails with ResourceExhausted, one at the limit
// passes.
func TestSizeLimitsEveryTransport(t *testing.T) {
	const limit = 1000
	// An EchoRequest or EchoResponse of n bytes of text encodes in n+3
	// bytes (tag, two-byte length).
	cases := []struct {
		name string
		opt  localgrpc.ServerOption
		text string
		want codes.Code
	}{
		{"recv=at-limit", localgrpc.WithServerMaxRecvMsgSize(limit), strings.Repeat("x", limit-3), codes.OK},
		{"recv=over-limit", localgrpc.WithServerMaxRecvMsgSize(limit), strings.Repeat("x", limit-2), codes.ResourceExhausted},
		{"send=at-limit", localgrpc.WithServerMaxSendMsgSize(limit), strings.Repeat("x", limit-3), codes.OK},
		{"send=over-limit", localgrpc.WithServerMaxSendMsgSize(limit), strings.Repeat("x", limit-2), codes.ResourceExhausted},
	}
	for _, tc := range cases {
		srv := newEchoServer(tc.opt)
		name := uniqueName(t)
		serve(t, srv, "inproc:"+name, "unix:@"+name, "shm:@"+uniqueName(t), "127.0.0.1:0")
		for _, addr := range srv.Addrs() {
			t.Run(tc.name+"/"+transportName(addr), func(t *testing.T) {
				_, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{Text: tc.text})
				if got := status.Code(err); got != tc.want {
					t.Errorf("Get: %v, want code %v", err, tc.want)
				}
			})
		}
	}
}

// TestDefaultCallOptionsEveryTransport sets a client's receive limit once,
// with WithDefaultCallOptions, and checks that every transport applies it,
// and that a call's own option overrides it, as with grpc-go.
func TestDefaultCallOptionsEveryTransport(t *testing.T) {
	const limit = 1000
	srv := newEchoServer()
	name := uniqueName(t)
	serve(t, srv, "inproc:"+name, "unix:@"+name, "shm:@"+uniqueName(t), "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		t.Run(transportName(addr), func(t *testing.T) {
			c := dial(t, addr, localgrpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(limit)))
			_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: strings.Repeat("x", limit)})
			if got := status.Code(err); got != codes.ResourceExhausted {
				t.Errorf("a response over the default limit: %v, want ResourceExhausted", err)
			}
			_, err = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: strings.Repeat("x", limit)}, grpc.MaxCallRecvMsgSize(2*limit))
			if err != nil {
				t.Errorf("a call whose own option raises the limit: %v", err)
			}
		})
	}
}
