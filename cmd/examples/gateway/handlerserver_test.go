package gateway_test

import (
	"net/http"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
)

// Why the gateway is given a client connection: grpc-gateway's other way in,
// RegisterGreeterServiceHandlerServer, calls the implementation directly,
// so the server's interceptors never see the call, and it refuses
// streams; the in-process connection keeps both.
func TestHandlerServerLosesWhatInprocKeeps(t *testing.T) {
	rec := newRecorder()
	r := newRig(t, gateway.Greeter{}, rec.options()...)
	direct, inproc := handlerServer(t, gateway.Greeter{}), r.backend(t, "inproc")
	unary, stream := calls[0].req, calls[1].req

	got := r.send(t.Context(), t, direct, unary)
	if got.status != http.StatusOK || len(rec.calls) != 0 {
		t.Errorf("handler-server: status %d, %d calls intercepted; want 200 and none", got.status, len(rec.calls))
	}
	// What it no longer loses, at the grpc-gateway go.mod pins: the
	// header of grpc.SendHeader.
	wantHeader(t, got.header, "Grpc-Metadata-X-Greeter", "localgrpc")
	if got := r.send(t.Context(), t, direct, stream); got.status != http.StatusNotImplemented {
		t.Errorf("handler-server: a stream's status %d, want 501", got.status)
	}
	for _, req := range []request{unary, stream} {
		if got := r.send(t.Context(), t, inproc, req); got.status != http.StatusOK {
			t.Errorf("inproc: %s %s: status %d, want 200", req.method, req.path, got.status)
		}
		if h := rec.next(t); h.err != nil {
			t.Errorf("inproc: the intercepted call ended with %v", h.err)
		}
	}
}
