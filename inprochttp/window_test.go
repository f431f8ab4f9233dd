package inprochttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A handler that writes more than the client reads waits with a window's
// worth of bytes buffered, and no more; it goes on as the client reads.
func TestWindowBounds(t *testing.T) {
	full := make(chan int, 1) // bytes buffered, each time a write waits
	testHookWindowFull = func(ex *exchange) {
		if cap(ex.win.buf) > windowSize {
			t.Errorf("the window grew to %d bytes", cap(ex.win.buf))
		}
		select {
		case full <- ex.win.waiting():
		default:
		}
	}
	t.Cleanup(func() { testHookWindowFull = nil })

	var written atomic.Int64
	ended := make(chan error, 1)
	rt := NewTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 1000)) // not a divisor of the window
		for {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				ended <- err
				return
			}
		}
	}))
	req, _ := http.NewRequest(http.MethodGet, "http://inproc/", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-full; got != windowSize {
		t.Errorf("a write waited with %d bytes buffered, want the window's %d", got, windowSize)
	}
	if got := written.Load(); got > windowSize {
		t.Errorf("the handler wrote %d bytes, more than the window's %d", got, windowSize)
	}
	// Reading makes room: once half the window is free, the handler
	// fills it again, and waits again.
	if _, err := io.ReadFull(resp.Body, make([]byte, windowSize/2)); err != nil {
		t.Fatal(err)
	}
	if got := <-full; got != windowSize {
		t.Errorf("after a read, a write waited with %d bytes buffered", got)
	}
	resp.Body.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the handler's write succeeded after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's write still waits after Close")
	}
}

// The request body is not buffered: what the handler has not read, the
// client has not written.
func TestRequestBodyUnbuffered(t *testing.T) {
	readSome, release := make(chan struct{}), make(chan struct{})
	rt := NewTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		io.ReadFull(r.Body, make([]byte, 10))
		close(readSome)
		<-release // reads nothing more
	}))
	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://inproc/", pr)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wrote := make(chan error, 1)
	n := 0
	go func() {
		var err error
		n, err = pw.Write(make([]byte, 1<<20))
		wrote <- err
	}()
	<-readSome
	close(release) // the handler returns, and its request body closes
	if err := <-wrote; !errors.Is(err, io.ErrClosedPipe) || n != 10 {
		t.Errorf("the client wrote %d bytes (%v); the handler read 10", n, err)
	}
}
