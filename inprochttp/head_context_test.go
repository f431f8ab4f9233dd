package inprochttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// A HEAD response is over for the client once it has the head: net/http's
// client resets the stream then, and the handler's context ends, so that a
// handler waiting on it (a stream, a long poll) returns. The client has no
// body to close, so nothing else can tell the handler. The context's
// cause is context.Canceled.
func TestHeadEndsHandlerContext(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		ended := make(chan struct{})
		release := make(chan struct{})
		defer close(release)
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				if cause := context.Cause(r.Context()); !errors.Is(cause, context.Canceled) {
					t.Errorf("the cause of the handler's context: %v; want context.Canceled", cause)
				}
				close(ended)
			case <-release:
			}
		}))
		req, _ := http.NewRequest(http.MethodHead, base+"/events", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		select {
		case <-ended:
		case <-time.After(bound):
			t.Errorf("the handler's context has not ended %v after the client got the HEAD response", bound)
		}
	})
}

// Once the client has a HEAD response's head, the handler's writes fail,
// as they do over net/http.
func TestHeadWriteAfterHead(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		got := make(chan error, 1)
		clientHasHead := make(chan struct{})
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			<-clientHasHead
			var err error
			for range 100 { // net/http's reset reaches the handler a moment later
				if _, err = io.WriteString(w, "b"); err != nil {
					break
				}
				if err = http.NewResponseController(w).Flush(); err != nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			got <- err
		}))
		req, _ := http.NewRequest(http.MethodHead, base+"/x", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		close(clientHasHead)
		if err := <-got; err == nil {
			t.Error("the handler's writes after the client had the HEAD response succeeded")
		}
		resp.Body.Close()
	})
}
