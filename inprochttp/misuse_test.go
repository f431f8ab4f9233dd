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
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// A trailer the handler declares, in "Trailer" or under
// http.TrailerPrefix, that may not be a trailer (Host, Content-Type,
// If-*, as httpguts.ValidTrailerHeader says) is not sent, and the
// transport's error log says so, a line for each, naming it, as
// net/http's server logs it to its ErrorLog.
func TestInvalidTrailerLogged(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Host, X-Ok, If-Match")
		io.WriteString(w, "body")
		w.Header().Set("Host", "h")
		w.Header().Set("X-Ok", "ok")
		w.Header().Set("If-Match", "m")
		w.Header().Set(http.TrailerPrefix+"Content-Type", "text/plain")
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	})
	invalid, valid := []string{"Host", "If-Match", "Content-Type"}, []string{"X-Ok", "X-Late"}
	var trailers []http.Header
	forEach(t, func(t *testing.T, tr transport) {
		var logged lockedBuffer
		hc, base := loggingClient(t, tr, h, log.New(&logged, "", 0))
		resp, err := hc.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(resp.Body); err != nil {
			t.Fatal(err)
		}
		trailers = append(trailers, resp.Trailer)
		got := logged.String()
		if n := strings.Count(got, "\n"); n != len(invalid) {
			t.Errorf("the error log has %d lines, want %d:\n%s", n, len(invalid), got)
		}
		for _, k := range invalid {
			if !strings.Contains(got, strconv.Quote(k)) {
				t.Errorf("the error log does not name %q:\n%s", k, got)
			}
		}
		for _, k := range valid {
			if strings.Contains(got, k) {
				t.Errorf("the error log names %q:\n%s", k, got)
			}
		}
	})
	if len(trailers) == 2 && !reflect.DeepEqual(trailers[0], trailers[1]) {
		t.Errorf("the client's trailers: in-process %v, net/http %v", trailers[0], trailers[1])
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A ResponseWriter used after ServeHTTP returned panics, as net/http's
// HTTP/2 writer does, all but EnableFullDuplex: a handler that leaks its
// writer crashes over a socket, and must in-process too, so that its
// tests catch it. Over a socket the writer is let go a moment after the
// client has the response's end, with nothing to tell when, and the
// race detector flags any look at it: net/http's part runs without it.
func TestUseAfterReturn(t *testing.T) {
	ops := []struct {
		name   string
		use    func(w http.ResponseWriter)
		panics bool
	}{
		{"Header", func(w http.ResponseWriter) { w.Header() }, true},
		{"WriteHeader", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) }, true},
		{"Write", func(w http.ResponseWriter) { w.Write([]byte("late")) }, true},
		{"WriteString", func(w http.ResponseWriter) { io.WriteString(w, "late") }, true},
		{"Flush", func(w http.ResponseWriter) { w.(http.Flusher).Flush() }, true},
		{"FlushError", func(w http.ResponseWriter) { http.NewResponseController(w).Flush() }, true},
		{"CloseNotify", func(w http.ResponseWriter) { w.(http.CloseNotifier).CloseNotify() }, true},
		{"SetReadDeadline", func(w http.ResponseWriter) { http.NewResponseController(w).SetReadDeadline(time.Now()) }, true},
		{"SetWriteDeadline", func(w http.ResponseWriter) { http.NewResponseController(w).SetWriteDeadline(time.Now()) }, true},
		{"Push", func(w http.ResponseWriter) {
			if p, ok := w.(http.Pusher); ok {
				p.Push("/style.css", nil)
			}
		}, true},
		{"EnableFullDuplex", func(w http.ResponseWriter) { http.NewResponseController(w).EnableFullDuplex() }, false},
	}
	panics := func(use func(http.ResponseWriter), w http.ResponseWriter) (p bool) {
		defer func() { p = recover() != nil }()
		use(w)
		return false
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				if tr.name != "inproc" && raceDetector {
					t.Skip("net/http lets its writer go unsynchronized")
				}
				kept := make(chan http.ResponseWriter, 1)
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, "ok")
					kept <- w
				}))
				resp, err := hc.Get(base + "/x")
				if err != nil {
					t.Fatal(err)
				}
				drain(resp.Body)
				w := <-kept
				if tr.name != "inproc" {
					// Header panics once net/http lets the writer go,
					// which it does after the client has the end and
					// tells no one: wait for that, as nothing else
					// can.
					for deadline := time.Now().Add(bound); !panics(func(w http.ResponseWriter) { w.Header() }, w); time.Sleep(time.Millisecond) {
						if time.Now().After(deadline) {
							t.Fatalf("Header did not panic within %v of the handler's return", bound)
						}
					}
				}
				if got := panics(op.use, w); got != op.panics {
					t.Errorf("%s after the handler returned: panicked %v, want %v", op.name, got, op.panics)
				}
			})
		})
	}
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
