package inprochttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"testing"

	"golang.org/x/net/http2"
)

// A client trace's Got1xxResponse that returns an error fails the
// request, and the handler's context ends, as over net/http: with a
// stream error (PROTOCOL_ERROR) whose Cause is the trace's error, which
// errors.Is does not find in the error itself. The cause of the
// handler's context is context.Canceled.
func TestGot1xxResponseError(t *testing.T) {
	refused := errors.New("no early hints, thanks")
	forEach(t, func(t *testing.T, tr transport) {
		ctxEnded := make(chan struct{})
		var cause error
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			<-r.Context().Done()
			cause = context.Cause(r.Context())
			close(ctxEnded)
		}))
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if code != http.StatusEarlyHints || h.Get("Link") == "" {
				t.Errorf("Got1xxResponse(%d, %v)", code, h)
			}
			return refused
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, base+"/x", nil)
		_, err := hc.Do(req)
		var se http2.StreamError
		if !errors.As(err, &se) || se.Code != http2.ErrCodeProtocol || !errors.Is(se.Cause, refused) || errors.Is(err, refused) {
			t.Errorf("the request ended with %v; want a stream error, PROTOCOL_ERROR, caused by the trace's error", err)
		}
		waitFor(t, ctxEnded, "the handler's context's end")
		if !errors.Is(cause, context.Canceled) {
			t.Errorf("the cause of the handler's context: %v; want context.Canceled", cause)
		}
	})
}
