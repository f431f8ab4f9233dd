package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/internal/servertest"
)

// A REST client's Grpc-Timeout header becomes the handler's deadline,
// on every transport.
func TestGrpcTimeoutReachesHandler(t *testing.T) {
	rec := newRecorder()
	r := newRig(t, newWaitingGreeter(), rec.options()...)
	for _, c := range calls {
		t.Run("call="+c.name, func(t *testing.T) {
			for _, b := range r.backends {
				r.send(t.Context(), t, b, c.req)
				if h := rec.next(t); !h.deadline.IsZero() {
					t.Errorf("backend=%s: without Grpc-Timeout, the handler has a deadline %v away", b.name, time.Until(h.deadline))
				}

				req := c.req
				req.header = http.Header{"Grpc-Timeout": {"30S"}}
				sent := time.Now()
				r.send(t.Context(), t, b, req)
				// The deadline is 30s after the gateway read the header,
				// give or take the socket's coding of it: wide bounds, in
				// which no other deadline would fall.
				h := rec.next(t)
				if d := h.deadline.Sub(sent); d < 20*time.Second || d > 40*time.Second {
					t.Errorf("backend=%s: with Grpc-Timeout 30S, the handler's deadline is %v after the request, want about 30s", b.name, d)
				}
			}
		})
	}
}

// A deadline that passes ends the handler's call and gives the REST
// client 504 Gateway Timeout with DeadlineExceeded in the body, on every
// transport.
func TestGrpcTimeoutExpires(t *testing.T) {
	rec := newRecorder()
	g := newWaitingGreeter()
	r := newRig(t, g, rec.options()...)
	req := request{method: http.MethodPost, path: "/v1/greet", body: `{"name": "` + waitName + `"}`,
		// Long enough that the call reaches the handler before it ends,
		// on a busy machine too.
		header: http.Header{"Grpc-Timeout": {"500m"}}}
	for _, b := range r.backends {
		// The test's context bounds the wait, should the deadline not
		// end the call.
		got := r.send(servertest.TimeoutCtx(t), t, b, req)
		var body struct{ Code int }
		if err := json.Unmarshal([]byte(got.body), &body); err != nil || got.status != http.StatusGatewayTimeout || body.Code != 4 {
			t.Errorf("backend=%s: status %d, body %q; want 504 with code 4 (%v)", b.name, got.status, got.body, err)
		}
		select {
		case <-g.started:
		case <-time.After(servertest.WaitLimit):
			t.Fatalf("backend=%s: the call never reached the handler", b.name)
		}
		// The handler's context ended: by its deadline, or, over a
		// socket, by the client's cancellation that raced it.
		if h := rec.next(t); h.err == nil {
			t.Errorf("backend=%s: the handler's context did not end", b.name)
		}
	}
}
