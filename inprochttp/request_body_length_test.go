package inprochttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The handler's request body is the one Content-Length announces: a
// client body shorter than its declared ContentLength fails the handler's
// read (net/http's client resets the stream, its server would not end the
// body early either), and a longer one is never read beyond the length
// (net/http's client refuses to send more, with an error).
func TestRequestBodyContentLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		declared int64
	}{
		{"shorter", "abc", 10},
		{"longer", "abcdef", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				type read struct {
					n   int
					cl  int64
					err error
				}
				got := make(chan read, 1)
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, err := io.ReadAll(r.Body)
					got <- read{len(b), r.ContentLength, err}
				}))
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", io.NopCloser(strings.NewReader(tc.body)))
				req.ContentLength = tc.declared
				resp, clientErr := hc.Do(req)
				if clientErr == nil {
					drain(resp.Body)
				}
				var r read
				select {
				case r = <-got:
				case <-t.Context().Done():
				case <-afterIf(clientErr != nil):
					// The client refused: the handler may never run.
				}
				if r.cl > 0 && r.cl != tc.declared {
					t.Errorf("the handler's ContentLength is %d, the client declared %d", r.cl, tc.declared)
				}
				if int64(r.n) > tc.declared {
					t.Errorf("the handler read %d bytes of a body declared %d bytes long", r.n, tc.declared)
				}
				if r.err == nil && int64(r.n) != tc.declared && (clientErr == nil || r.n > 0) {
					t.Errorf("the handler read %d bytes of %d declared and then io.EOF, as if the body were whole", r.n, tc.declared)
				}
				if int64(len(tc.body)) > tc.declared && clientErr == nil {
					t.Error("the client sent a body longer than its ContentLength without an error")
				}
			})
		})
	}
}

// afterIf is a channel that fires a second from now if cond, and never
// otherwise.
func afterIf(cond bool) <-chan time.Time {
	if !cond {
		return nil
	}
	return time.After(time.Second)
}
