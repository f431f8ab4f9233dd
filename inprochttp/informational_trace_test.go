package inprochttp_test

import (
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"testing"
)

// A client trace's Got1xxResponse that returns an error fails the request, and the handler's context ends, as over net/http.
func TestGot1xxResponseError(t *testing.T) {
	refused := errors.New("no early hints, thanks")
	forEach(t, func(t *testing.T, tr transport) {
		ctxEnded := make(chan struct{})
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			<-r.Context().Done()
			close(ctxEnded)
		}))
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if code != http.StatusEarlyHints || h.Get("Link") == "" {
				t.Errorf("Got1xxResponse(%d, %v)", code, h)
			}
			return refused
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, base+"/x", nil)
		// net/http reports the trace's error in its words, not wrapped.
		if _, err := hc.Do(req); err == nil {
			t.Error("the request succeeded though the trace refused its 1xx response")
		}
		waitFor(t, ctxEnded, "the handler's context's end")
	})
}
