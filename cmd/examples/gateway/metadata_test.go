package gateway_test

import (
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
	"google.golang.org/grpc/metadata"
)

// calls are a unary and a streamed REST call of the service.
var calls = []struct {
	name   string
	method string // the gRPC method the gateway calls
	req    request
}{
	{"unary", "/greeter.v1.GreeterService/Greet", request{method: http.MethodPost, path: "/v1/greet", body: `{"name": "Ada"}`}},
	{"stream", "/greeter.v1.GreeterService/GreetMany", request{method: http.MethodGet, path: "/v1/names/Ada/greetings?count=3"}},
}

// The headers of a REST request reach the handler as the metadata
// grpc-gateway's rules make of them, the same whatever the transport.
func TestHTTPHeadersArriveAsMetadata(t *testing.T) {
	rec := newRecorder()
	r := newRig(t, gateway.Greeter{}, rec.options()...)
	header := http.Header{
		"Grpc-Metadata-Tenant": {"acme"},     // the prefix is cut
		"Authorization":        {"Bearer t"}, // kept, and prefixed too
		"User-Agent":           {"rest-client/1"},
		"X-Unknown":            {"dropped"}, // neither permanent nor prefixed
	}
	want := map[string][]string{
		"tenant":                    {"acme"},
		"authorization":             {"Bearer t"},
		"grpcgateway-authorization": {"Bearer t"},
		"grpcgateway-user-agent":    {"rest-client/1"},
		"x-forwarded-for":           {"127.0.0.1"},
	}
	for _, c := range calls {
		t.Run("call="+c.name, func(t *testing.T) {
			req := c.req
			req.header = header
			var oracle metadata.MD
			for _, b := range r.backends {
				r.send(t.Context(), t, b, req)
				md := gatewayMetadata(t, b, rec.next(t).md)
				if b == r.backends[0] {
					oracle = md
					for k, v := range want {
						if !reflect.DeepEqual(md[k], v) {
							t.Errorf("backend=%s: metadata %s: %q, want %q", b.name, k, md[k], v)
						}
					}
					if v, ok := md["x-unknown"]; ok {
						t.Errorf("backend=%s: metadata x-unknown: %q, want none", b.name, v)
					}
					continue
				}
				if !reflect.DeepEqual(md, oracle) {
					t.Errorf("backend=%s: metadata %v\nbackend=%s: metadata %v", b.name, md, r.backends[0].name, oracle)
				}
			}
		})
	}
}

// gatewayMetadata is md without what rightly differs between b and the
// other backends: :authority, the address the gateway's client dialled,
// and x-forwarded-host, the gateway's own address, which is checked.
func gatewayMetadata(t *testing.T, b backend, md metadata.MD) metadata.MD {
	t.Helper()
	u, err := url.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	if got := md["x-forwarded-host"]; !reflect.DeepEqual(got, []string{u.Host}) {
		t.Errorf("backend=%s: metadata x-forwarded-host: %q, want %q", b.name, got, u.Host)
	}
	md = md.Copy()
	delete(md, ":authority")
	delete(md, "x-forwarded-host")
	return md
}

// Each REST call is one gRPC call: the gateway's client interceptors and
// the server's run once for it, on every transport.
func TestInterceptorsRunOncePerCall(t *testing.T) {
	rec := newRecorder()
	r := newRig(t, gateway.Greeter{}, rec.options()...)
	for _, c := range calls {
		t.Run("call="+c.name, func(t *testing.T) {
			for _, b := range r.backends {
				before := b.calls.Load()
				r.send(t.Context(), t, b, c.req)
				if n := b.calls.Load() - before; n != 1 {
					t.Errorf("backend=%s: the client's interceptors saw %d calls, want 1", b.name, n)
				}
				// The server's interceptors record a call before its
				// status leaves the server, so before the reply ends:
				// all that ran for this call are in rec by now.
				if n := len(rec.calls); n != 1 {
					t.Fatalf("backend=%s: the server's interceptors saw %d calls, want 1", b.name, n)
				}
				if h := rec.next(t); h.method != c.method {
					t.Errorf("backend=%s: the server's interceptors saw %s, want %s", b.name, h.method, c.method)
				}
			}
		})
	}
}
