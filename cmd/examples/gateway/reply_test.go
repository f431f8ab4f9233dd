package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A request is a REST request to any backend's gateway.
type request struct {
	method, path, body string
	header             http.Header
}

// A reply is what a REST client got: all of it but the Date header,
// which tells when, not what.
type reply struct {
	status  int
	header  http.Header
	body    string
	trailer http.Header
}

// send sends req to b's gateway and reads the whole reply.
func (r *rig) send(ctx context.Context, t *testing.T, b backend, req request) reply {
	t.Helper()
	resp, err := r.do(ctx, b, req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.method, req.path, err)
	}
	resp.Header.Del("Date")
	return reply{status: resp.StatusCode, header: resp.Header, body: string(body), trailer: resp.Trailer}
}

// do sends req to b's gateway and returns once the reply's headers came.
func (r *rig) do(ctx context.Context, b backend, req request) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, req.method, b.url+req.path, strings.NewReader(req.body))
	if err != nil {
		return nil, err
	}
	for k, vs := range req.header {
		hreq.Header[k] = vs
	}
	return r.client.Do(hreq)
}
