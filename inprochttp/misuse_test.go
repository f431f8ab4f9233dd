package inprochttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/inprochttp"
	"golang.org/x/net/http2"
)

// A nil where the transport needs a value panics at once, naming it.
func TestNilArgumentsPanic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		call  func()
		names string
	}{
		{"NewTransport", func() { inprochttp.NewTransport(nil) }, "nil handler"},
		{"WithServer", func() { inprochttp.WithServer(nil) }, "nil *http.Server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), tc.names) {
					t.Errorf("%s(nil) panicked with %v, want a panic naming the %s", tc.name, p, tc.names)
				}
			}()
			tc.call()
		})
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	mu     sync.Mutex
	closed int
}

func (c *closeCounter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed++
	return nil
}

// A request no client could send is refused, naming what is wrong, and its
// body is closed; the handler never runs.
func TestMalformedRequests(t *testing.T) {
	rt := inprochttp.NewTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the handler ran for %s %s", r.Method, r.URL)
	}))
	if _, err := rt.RoundTrip(nil); err == nil || !strings.Contains(err.Error(), "nil Request") {
		t.Errorf("RoundTrip(nil): %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		modify func(*http.Request)
		want   string
	}{
		{"nil-url", func(r *http.Request) { r.URL = nil }, "nil Request.URL"},
		{"nil-header", func(r *http.Request) { r.Header = nil }, "nil Request.Header"},
		{"scheme", func(r *http.Request) { r.URL.Scheme = "ftp" }, `scheme "ftp"`},
		{"no-scheme", func(r *http.Request) { r.URL, _ = url.Parse("localhost:8080/x") }, `scheme "localhost"`},
		{"no-host", func(r *http.Request) { r.URL.Host, r.Host = "", "" }, "no Host"},
		{"method", func(r *http.Request) { r.Method = "GET /" }, `invalid method "GET /"`},
		{"header-name", func(r *http.Request) { r.Header["Bad Name"] = []string{"v"} }, `header field name "Bad Name"`},
		{"header-value", func(r *http.Request) { r.Header.Set("X-Split", "a\r\nX-Injected: b") }, `header field value for "X-Split"`},
		{"cancelled", func(r *http.Request) { *r = *r.WithContext(cancelled) }, context.Canceled.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &closeCounter{Reader: strings.NewReader("body")}
			req, _ := http.NewRequest(http.MethodPost, "http://inproc/x", body)
			tc.modify(req)
			resp, err := rt.RoundTrip(req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RoundTrip: %v, %v; want an error saying %q", resp, err, tc.want)
			}
			if body.closed != 1 {
				t.Errorf("the body was closed %d times, want once", body.closed)
			}
		})
	}
}

// The request is not changed by the transport: its header and URL are the
// client's still.
func TestRequestUnchanged(t *testing.T) {
	rt := inprochttp.NewTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Handler", "changed")
		r.URL.Path = "/changed"
	}))
	req, _ := http.NewRequest(http.MethodGet, "http://inproc/x", nil)
	req.Header["x-lower"] = []string{"v"}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	drain(resp.Body)
	if req.URL.String() != "http://inproc/x" || len(req.Header) != 1 || req.Header["x-lower"][0] != "v" {
		t.Errorf("the request changed: %s %v", req.URL, req.Header)
	}
}

// A panic is logged with its stack, as net/http logs it; an
// http.ErrAbortHandler or a goroutine's exit is not. The client gets a
// stream reset each time (INTERNAL_ERROR), in which errors.Is finds no
// http.ErrAbortHandler, as a reset over a socket carries none, and the
// process carries on.
func TestPanicLogged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		do     func()
		logged bool
	}{
		{"panic", func() { panic("boom") }, true},
		{"panic-nil", func() { panic(nil) }, true},
		{"abort", func() { panic(http.ErrAbortHandler) }, false},
		{"goexit", runtime.Goexit, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			var mu sync.Mutex
			l := log.New(writerFunc(func(p []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return logged.Write(p)
			}), "", 0)
			rt := inprochttp.NewTransport(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { tc.do() }), inprochttp.WithErrorLog(l))
			req, _ := http.NewRequest(http.MethodGet, "http://inproc/x", nil)
			_, err := rt.RoundTrip(req)
			var se http2.StreamError
			if !errors.As(err, &se) || se.Code != http2.ErrCodeInternal || errors.Is(err, http.ErrAbortHandler) {
				t.Errorf("RoundTrip: %v, want a stream reset with INTERNAL_ERROR, and no http.ErrAbortHandler", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := logged.String(); tc.logged != strings.Contains(got, "panic serving GET /x") || tc.logged != strings.Contains(got, "goroutine ") {
				t.Errorf("logged:\n%s", got)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A ResponseWriter kept past the handler's return fails its writes without
// panicking.
func TestWriteAfterReturn(t *testing.T) {
	kept := make(chan http.ResponseWriter, 1)
	rt := inprochttp.NewTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kept <- w
	}), inprochttp.WithErrorLog(log.New(io.Discard, "", 0)))
	req, _ := http.NewRequest(http.MethodGet, "http://inproc/x", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	drain(resp.Body)
	w := <-kept
	if _, err := w.Write([]byte("late")); err == nil {
		t.Error("a write after the handler returned succeeded")
	}
	if err := http.NewResponseController(w).Flush(); err == nil {
		t.Error("a flush after the handler returned succeeded")
	}
	w.WriteHeader(http.StatusTeapot) // ignored
	w.Header().Set("X-Late", "ignored")
}

// WriteHeader with a code no response can have panics, as net/http's does;
// the client gets a reset.
func TestWriteHeaderInvalid(t *testing.T) {
	var p any
	rt := inprochttp.NewTransport(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { p = recover() }()
		w.WriteHeader(1000)
	}))
	req, _ := http.NewRequest(http.MethodGet, "http://inproc/x", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	drain(resp.Body)
	if p == nil || !strings.Contains(fmt.Sprint(p), "invalid WriteHeader code 1000") {
		t.Errorf("WriteHeader(1000) panicked with %v", p)
	}
}

// Many exchanges at once on one transport, each full duplex.
func TestConcurrentExchanges(t *testing.T) {
	hc, base := inprocClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(http.TrailerPrefix+"X-Path", r.URL.Path)
		io.Copy(w, r.Body)
	}))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 50 {
				path := fmt.Sprintf("/%d/%d", i, j)
				body := strings.Repeat(path, 1000)
				resp, err := hc.Post(base+path, "text/plain", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				got, err := drain(resp.Body)
				if err != nil || got != body || resp.Trailer.Get("X-Path") != path {
					t.Errorf("%s: %d bytes, %v, trailer %q", path, len(got), err, resp.Trailer.Get("X-Path"))
				}
			}
		})
	}
	wg.Wait()
}
