package gateway_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
)

// Every REST request gets the same reply, status, headers, body and
// trailers, whether the gateway calls the server in-process, over a unix
// socket or over TCP; and the reply over the unix socket is what
// grpc-gateway's rules say it is.
func TestRESTAgrees(t *testing.T) {
	r := newRig(t, gateway.Greeter{})
	for _, tc := range []struct {
		name string
		req  request
		// check checks the unix socket's reply, the oracle the others
		// are compared with, against grpc-gateway's rules.
		check func(t *testing.T, got reply)
	}{{
		name: "unary",
		req:  request{method: http.MethodPost, path: "/v1/greet", body: `{"name": "Ada"}`},
		check: func(t *testing.T, got reply) {
			wantStatus(t, got, http.StatusOK)
			wantJSON(t, got.body, map[string]any{"greeting": "Hello, Ada!"})
			// grpc.SendHeader's header, prefixed; no trailers for a
			// client that did not ask for them.
			wantHeader(t, got.header, "Grpc-Metadata-X-Greeter", "localgrpc")
			wantHeader(t, got.header, "Grpc-Trailer-X-Greetings", "")
			wantHeader(t, got.trailer, "Grpc-Trailer-X-Greetings", "")
		},
	}, {
		name: "unary-trailers",
		req: request{method: http.MethodPost, path: "/v1/greet", body: `{"name": "Ada"}`,
			header: http.Header{"Te": {"trailers"}}},
		check: func(t *testing.T, got reply) {
			wantStatus(t, got, http.StatusOK)
			// grpc.SetTrailer's trailer, as an HTTP trailer, prefixed.
			wantHeader(t, got.trailer, "Grpc-Trailer-X-Greetings", "1")
		},
	}, {
		name: "unary-details",
		req:  request{method: http.MethodPost, path: "/v1/greet", body: `{}`},
		check: func(t *testing.T, got reply) {
			wantStatus(t, got, http.StatusBadRequest)
			wantJSON(t, got.body, map[string]any{
				"code":    float64(3),
				"message": "name must not be empty",
				"details": []any{map[string]any{
					"@type": "type.googleapis.com/google.rpc.BadRequest",
					"fieldViolations": []any{map[string]any{
						"field": "name", "description": "must not be empty",
						"reason": "", "localizedMessage": nil,
					}},
				}},
			})
		},
	}, {
		name: "stream",
		req:  request{method: http.MethodGet, path: "/v1/names/Ada/greetings?count=3"},
		check: func(t *testing.T, got reply) {
			wantStatus(t, got, http.StatusOK)
			wantHeader(t, got.header, "Grpc-Metadata-X-Greeter", "localgrpc")
			lines := strings.SplitAfter(got.body, "\n")
			if len(lines) != 4 || lines[3] != "" {
				t.Fatalf("body %q: want 3 lines of JSON, each ending in a newline", got.body)
			}
			for i, line := range lines[:3] {
				wantJSON(t, line, map[string]any{"result": map[string]any{
					"number": float64(i + 1), "greeting": "Hello, Ada!",
				}})
			}
		},
	}, {
		name: "stream-trailers",
		req: request{method: http.MethodGet, path: "/v1/names/Ada/greetings?count=1",
			header: http.Header{"Te": {"trailers"}}},
		check: func(t *testing.T, got reply) {
			// grpc-gateway forwards no trailers of a stream, asked or not.
			wantStatus(t, got, http.StatusOK)
			if len(got.trailer) != 0 || len(got.header.Values("Trailer")) != 0 {
				t.Errorf("header %v, trailer %v: want no trailers", got.header, got.trailer)
			}
		},
	}, {
		name: "stream-details",
		req:  request{method: http.MethodGet, path: "/v1/names/Ada/greetings?count=0"},
		check: func(t *testing.T, got reply) {
			// An error before the first message sets the status; the
			// body is one line with the error.
			wantStatus(t, got, http.StatusBadRequest)
			var line struct {
				Error struct {
					Code    int
					Details []map[string]any
				}
			}
			if err := json.Unmarshal([]byte(got.body), &line); err != nil || line.Error.Code != 3 || len(line.Error.Details) != 1 ||
				!strings.HasSuffix(got.body, "}\n") {
				t.Errorf("body %q: want one line with an error of code 3 and one detail (%v)", got.body, err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			oracle := r.send(t.Context(), t, r.backends[0], tc.req)
			tc.check(t, oracle)
			for _, b := range r.backends[1:] {
				if got := r.send(t.Context(), t, b, tc.req); !reflect.DeepEqual(got, oracle) {
					t.Errorf("backend=%s: got %+v\nbackend=%s: got %+v", b.name, got, r.backends[0].name, oracle)
				}
			}
		})
	}
}

func wantStatus(t *testing.T, got reply, status int) {
	t.Helper()
	if got.status != status {
		t.Fatalf("status %d, want %d (body %q)", got.status, status, got.body)
	}
}

// wantHeader checks h's values of key: want alone, or none if want is "".
func wantHeader(t *testing.T, h http.Header, key, want string) {
	t.Helper()
	got := h.Values(key)
	if (want == "" && len(got) != 0) || (want != "" && !reflect.DeepEqual(got, []string{want})) {
		t.Errorf("%s: %q, want %q", key, got, want)
	}
}

// wantJSON checks that body is the JSON of want. (protojson varies its
// spacing on purpose, so text is not compared with a literal.)
func wantJSON(t *testing.T, body string, want any) {
	t.Helper()
	var got any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body %s, want the JSON of %v", body, want)
	}
}
