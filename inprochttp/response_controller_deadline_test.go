package inprochttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// net/http's HTTP/2 response writer supports http.ResponseController's
// SetWriteDeadline: a write to a client that does not read fails once the
// deadline passes, so a handler can bound a slow client.
func TestSetWriteDeadline(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		type result struct{ setErr, writeErr error }
		got := make(chan result, 1)
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			setErr := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			chunk := strings.Repeat("x", 64<<10)
			var err error
			for err == nil { // far more than any window: the client reads none of it
				_, err = io.WriteString(w, chunk)
			}
			got <- result{setErr, err}
		}))
		resp, err := hc.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		select {
		case r := <-got:
			if r.setErr != nil {
				t.Errorf("SetWriteDeadline: %v", r.setErr)
			}
		case <-time.After(bound):
			t.Errorf("the handler's write to a client that does not read still waits %v after its write deadline", bound)
		}
	})
}

// And SetReadDeadline: a read of a request body the client does not send
// fails once the deadline passes.
func TestSetReadDeadline(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		type result struct{ setErr, readErr error }
		got := make(chan result, 1)
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			setErr := http.NewResponseController(w).SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			_, err := io.ReadAll(r.Body)
			got <- result{setErr, err}
		}))
		pr, pw := io.Pipe()
		defer pw.Close()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", pr)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		select {
		case r := <-got:
			if r.setErr != nil {
				t.Errorf("SetReadDeadline: %v", r.setErr)
			}
			if r.readErr == nil {
				t.Error("the read past the deadline succeeded")
			}
		case <-time.After(bound):
			t.Errorf("the handler's read of a body the client does not send still waits %v after its read deadline", bound)
		}
	})
}

// net/http's HTTP/2 response writer is an http.CloseNotifier (deprecated,
// but still served): a handler that asserts it does not panic, and its
// channel fires when the client goes.
func TestCloseNotifier(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		notified := make(chan bool, 1)
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cn, ok := w.(http.CloseNotifier)
			if !ok {
				notified <- false
				return
			}
			ch := cn.CloseNotify()
			w.(http.Flusher).Flush()
			select {
			case <-ch:
				notified <- true
			case <-time.After(bound):
				notified <- false
			}
		}))
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		resp.Body.Close()
		if !<-notified {
			t.Error("the response writer is no http.CloseNotifier, or its channel did not fire when the client went")
		}
	})
}
