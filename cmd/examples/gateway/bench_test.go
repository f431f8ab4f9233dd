package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
)

// benchCalls are the REST calls measured: a unary call, and a stream of
// 1,000 greetings (about 50 KB of newline-delimited JSON).
var benchCalls = []struct {
	name  string
	req   request
	lines int // in the reply's body
}{
	{"unary", calls[0].req, 1},
	{"stream", request{method: http.MethodGet, path: "/v1/names/Ada/greetings?count=1000"}, 1000},
}

// BenchmarkGateway measures REST calls to grpc-gateway, over HTTP on
// loopback, whose client reaches the server over loopback TCP, over a
// unix socket and in-process (backend=inproc); and, for the unary call, the
// floor: the gateway calling the implementation itself
// (backend=handler-server, RegisterGreeterServiceHandlerServer), which
// skips interceptors and cannot stream.
//
// Compare the backends with: benchstat -col /backend.
func BenchmarkGateway(b *testing.B) {
	r := newRig(b, gateway.Greeter{})
	// Loopback TCP first, the baseline benchstat compares the others
	// with: the connection a gateway is usually given.
	backends := []backend{r.backend(b, "tcp"), r.backend(b, "unix"), r.backend(b, "inproc"), handlerServer(b, gateway.Greeter{})}

	for _, be := range backends {
		b.Run("backend="+be.name, func(b *testing.B) {
			for _, c := range benchCalls {
				if be.name == "handler-server" && c.name == "stream" {
					continue
				}
				b.Run("call="+c.name, func(b *testing.B) {
					r.check(b, be, c.req, c.lines)
					b.ReportAllocs()
					for b.Loop() {
						resp, err := r.do(b.Context(), be, c.req)
						if err != nil {
							b.Fatal(err)
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Fatal(resp.Status)
						}
					}
				})
			}
		})
	}
}

// check fails b unless req gets 200 OK and a body of lines lines from be.
func (r *rig) check(b *testing.B, be backend, req request, lines int) {
	b.Helper()
	resp, err := r.do(b.Context(), be, req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	// A unary reply has no newline of its own.
	if n := bytes.Count(body, []byte("\n")); resp.StatusCode != http.StatusOK || max(n, 1) != lines {
		b.Fatalf("backend=%s: %s, %d lines, want 200 OK and %d lines: %.200q", be.name, resp.Status, n, lines, body)
	}
}
