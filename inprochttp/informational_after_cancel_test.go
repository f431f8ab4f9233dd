package inprochttp_test

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync/atomic"
	"testing"
)

// A 1xx response the handler writes after the client has gone (here, its
// context ended) reaches no one: the client's trace is not called after
// its request has failed, as net/http's client drops what arrives on a
// reset stream. Calling it then would race with the client's code, which
// may take the request for over.
func TestInformationalAfterClientCancel(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		started, wrote, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(wrote)
			close(started)
			<-r.Context().Done()
			<-done // the client's request has failed
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.(http.Flusher).Flush()
		}))
		var late atomic.Int32
		var returned atomic.Bool
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if returned.Load() {
				late.Add(1)
			}
			return nil
		}}
		ctx, cancel := context.WithCancel(httptrace.WithClientTrace(t.Context(), trace))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
		go func() {
			defer close(done)
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
				t.Error("the request succeeded though its context was cancelled")
			}
			returned.Store(true)
		}()
		waitFor(t, started, "the handler's start")
		cancel()
		waitFor(t, done, "the cancelled request's return")
		waitFor(t, wrote, "the handler's 1xx after the client's cancel")
		if n := late.Load(); n != 0 {
			t.Errorf("the client's trace got %d 1xx responses after its request failed", n)
		}
	})
}
