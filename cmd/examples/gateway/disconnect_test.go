package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A REST client that goes away mid-call cancels the handler's context,
// on every transport: a unary handler that waits, and a stream of more
// greetings than anyone would wait for. The gateway logs the stream's
// writes that fail once its client has gone: the test's log holds them.
func TestDisconnectCancelsHandler(t *testing.T) {
	routeGRPCLog(t)
	rec := newRecorder()
	g := newWaitingGreeter()
	r := newRig(t, g, rec.options()...)
	for _, tc := range []struct {
		name string
		req  request
		// running returns once the handler runs, or fails the test.
		running func(t *testing.T, resp <-chan response)
	}{{
		name: "unary",
		req:  request{method: http.MethodPost, path: "/v1/greet", body: `{"name": "` + waitName + `"}`},
		running: func(t *testing.T, _ <-chan response) {
			select {
			case <-g.started:
			case <-time.After(servertest.WaitLimit):
				t.Fatal("the call never reached the handler")
			}
		},
	}, {
		name: "stream",
		req:  request{method: http.MethodGet, path: "/v1/names/Ada/greetings?count=2147483647"},
		running: func(t *testing.T, resps <-chan response) {
			// A greeting came through: the handler streams.
			resp := <-resps
			if resp.err != nil {
				t.Fatal(resp.err)
			}
			defer resp.Body.Close()
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		},
	}} {
		t.Run("call="+tc.name, func(t *testing.T) {
			for _, b := range r.backends {
				ctx, disconnect := context.WithCancel(servertest.TimeoutCtx(t))
				resps := make(chan response, 1)
				// Ends when the reply's headers come, or the disconnection.
				go func() {
					resp, err := r.do(ctx, b, tc.req)
					resps <- response{resp, err}
				}()
				tc.running(t, resps)
				disconnect()
				h := rec.next(t)
				// grpc-go's server marks a reset stream done before it
				// cancels its context: a streaming handler whose Send
				// failed there may return first. The Send's failure then
				// says the client left.
				sendFailed := tc.name == "stream" && h.err == nil && slices.Contains([]codes.Code{codes.Canceled, codes.Unavailable}, status.Code(h.handlerErr))
				if !errors.Is(h.err, context.Canceled) && !sendFailed {
					t.Errorf("backend=%s: the handler's context ended with %v, want %v", b.name, h.err, context.Canceled)
				}
				// The unary call's client gets no reply: it went away.
				if tc.name == "unary" {
					if resp := <-resps; resp.err == nil {
						resp.Body.Close()
						t.Errorf("backend=%s: a reply came after the client went away", b.name)
					}
				}
			}
		})
	}
}

// A response is what http.Client.Do returned.
type response struct {
	*http.Response
	err error
}
