package inprochttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// requestBodyCases are the ways a client gives (or not) a request body;
// the handler must see each as it would over a socket.
var requestBodyCases = []exchangeCase{
	{
		name: "get-nil-body",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.ContentLength = 5 // no body: ignored
			return req
		},
		handler: sawRequestBody,
	},
	{
		name: "put-nil-body",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPut, base+"/x", nil)
			return req
		},
		handler: sawRequestBody,
	},
	{
		// The first read of a body the client has none of still sends
		// 100 Continue.
		name: "get-nil-body-expect-continue",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Header.Set("Expect", "100-continue")
			return req
		},
		handler: sawRequestBody,
	},
	{
		name: "post-nobody-with-length",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", http.NoBody)
			req.ContentLength = 5
			return req
		},
		handler: sawRequestBody,
	},
	{
		name: "post-unknown-length",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", io.NopCloser(strings.NewReader("unknown")))
			req.ContentLength = -1
			return req
		},
		handler: sawRequestBody,
	},
	{
		name: "post-zero-length-with-body",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", io.NopCloser(strings.NewReader("zero means unknown")))
			req.ContentLength = 0
			return req
		},
		handler: sawRequestBody,
	},
	{
		name: "get-with-body",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", strings.NewReader("a GET body"))
			return req
		},
		handler: sawRequestBody,
	},
	{
		name: "max-bytes-reader",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("more than three"))
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			r.Body = http.MaxBytesReader(w, r.Body, 3)
			b, err := io.ReadAll(r.Body)
			var mbe *http.MaxBytesError
			saw("read", fmt.Sprint(string(b), errors.As(err, &mbe)))
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		},
	},
	{
		name: "body-never-read",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader(strings.Repeat("x", 1<<20)))
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "not read")
		},
	},
	{
		name: "body-closed-by-handler",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("abc"))
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			r.Body.Close()
			n, err := r.Body.Read(make([]byte, 3))
			saw("read", fmt.Sprint(n, " ", errorClass(err)))
		},
	},
}

// sawRequestBody notes the handler's request body: whether it is
// http.NoBody (net/http's HTTP/2 server gives a body of its own to a
// request without one), its length, what it reads, and what a read
// after Close gets.
func sawRequestBody(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
	saw("noBody", r.Body == http.NoBody)
	saw("contentLength", r.ContentLength)
	saw("content-length", r.Header["Content-Length"])
	b, err := io.ReadAll(r.Body)
	saw("body", fmt.Sprint(string(b), err))
	r.Body.Close()
	n, err := r.Body.Read(make([]byte, 1))
	saw("read after close", fmt.Sprint(n, " ", errorClass(err)))
}

// TestRequestBodyVariants runs each of requestBodyCases in-process and
// over a unix socket to net/http's HTTP/2 server, and compares.
func TestRequestBodyVariants(t *testing.T) {
	for _, c := range requestBodyCases {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, transports[0], c)
			want := run(t, transports[1], c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("in-process and net/http differ:\n%s", diff(got, want))
			}
		})
	}
}

// TestRequestNegativeContentLength: net/http's client sends no
// Content-Length for a negative ContentLength, so the handler sees -1,
// unknown; but for -1 itself, it then fails at its first read of the
// body, which is longer than any negative length, and resets the stream
// (CANCEL): RoundTrip fails, and so does the handler's read. (Within a
// read of math.MinInt64 net/http's count of what is left wraps, and it
// sends the body; in-process that length fails as the others.)
func TestRequestNegativeContentLength(t *testing.T) {
	// seen is what the handler saw: its request's ContentLength and
	// Content-Length field, and its read's error.
	type seen struct {
		contentLength int64
		field         string
		read          string
	}
	for _, tc := range []struct {
		length int64
		client string
		seen   seen
	}{
		{-1, "", seen{-1, "", ""}},
		{-2, "error", seen{-1, "", "stream error, CANCEL"}},
		{-5, "error", seen{-1, "", "stream error, CANCEL"}},
		{-1 << 62, "error", seen{-1, "", "stream error, CANCEL"}},
	} {
		t.Run(strconv.FormatInt(tc.length, 10), func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				saw := make(chan seen, 1)
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, err := io.ReadAll(r.Body)
					saw <- seen{r.ContentLength, r.Header.Get("Content-Length"), errorClass(err)}
				}))
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", io.NopCloser(strings.NewReader("abc")))
				req.ContentLength = tc.length
				resp, err := hc.Do(req)
				if err == nil {
					drain(resp.Body)
				}
				if got := errorClass(err); got != tc.client {
					t.Errorf("the client got %v, of class %q; want %q", err, got, tc.client)
				}
				select {
				case got := <-saw:
					if got != tc.seen {
						t.Errorf("the handler saw %+v, want %+v", got, tc.seen)
					}
				case <-time.After(bound):
					t.Fatalf("the handler did not run within %v", bound)
				}
			})
		})
	}
}

// TestRequestTrailerNotAllowed: a request whose trailers hold a field
// that may not be a trailer (Host, Authorization, Content-Type, If-*,
// as httpguts.ValidTrailerHeader says) is malformed to net/http's HTTP/2
// server, which resets the stream (PROTOCOL_ERROR): the handler's read
// of the body's end fails, its trailers keep no value, its context ends
// and its writes fail. A declared trailer given no value sends no field,
// and an allowed one reaches the handler. The client fails with the
// stream error, in RoundTrip or in its read of the body if the head came
// first, as net/http's does when it cannot send the request again: with
// a Request.GetBody, it sends it again and again until its context ends,
// which the in-process one does not.
func TestRequestTrailerNotAllowed(t *testing.T) {
	// seen is what the handler saw of the body and its trailers, the
	// class of its flush's error, and whether its context ended, its
	// cause context.Canceled.
	type seen struct {
		body, read, trailer, flush string
		canceled                   bool
	}
	refused := func(key string) seen {
		return seen{"a", "stream error, PROTOCOL_ERROR", fmt.Sprint(http.Header{key: nil}), "error", true}
	}
	for _, tc := range []struct {
		name         string
		trailer      http.Header
		respondFirst bool // the handler flushes its head before it reads
		want         seen
	}{
		{"host", http.Header{"Host": {"v"}}, false, refused("Host")},
		{"authorization", http.Header{"Authorization": {"v"}}, false, refused("Authorization")},
		{"content-type", http.Header{"content-type": {"v"}}, false, refused("Content-Type")},
		{"if-match", http.Header{"If-Match": {"v"}}, false, refused("If-Match")},
		{"host-head-first", http.Header{"Host": {"v"}}, true, refused("Host")},
		{"host-without-value", http.Header{"Host": nil}, false, seen{"a", "", fmt.Sprint(http.Header{"Host": nil}), "", false}},
		{"allowed", http.Header{"X-Sum": {"v"}}, false, seen{"a", "", fmt.Sprint(http.Header{"X-Sum": {"v"}}), "", false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				saw := make(chan seen, 1)
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.respondFirst {
						w.(http.Flusher).Flush()
					}
					b, err := io.ReadAll(r.Body)
					s := seen{body: string(b), read: errorClass(err), trailer: fmt.Sprint(r.Trailer)}
					io.WriteString(w, "ok")
					s.flush = errorClass(http.NewResponseController(w).Flush())
					s.canceled = errors.Is(context.Cause(r.Context()), context.Canceled)
					select {
					case saw <- s:
					default: // net/http's client sent it again
					}
				}))
				ctx, cancel := context.WithTimeout(t.Context(), bound)
				defer cancel()
				// No GetBody: net/http's client cannot send it again.
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/x", io.NopCloser(strings.NewReader("a")))
				req.Trailer = tc.trailer
				client := make(chan error, 1)
				go func() {
					resp, err := hc.Do(req)
					if err == nil {
						_, err = drain(resp.Body)
					}
					client <- err
				}()
				select {
				case got := <-saw:
					if got != tc.want {
						t.Errorf("the handler saw %+v\nwant %+v", got, tc.want)
					}
				case <-time.After(bound):
					t.Fatalf("the handler did not read the body within %v", bound)
				}
				select {
				case err := <-client:
					refused := tc.want.read != ""
					switch got := errorClass(err); {
					case refused != (err != nil):
						t.Errorf("the client got %v", err)
					case refused && tr.name == "inproc" && got != "stream error, PROTOCOL_ERROR":
						// net/http's words say it; its error holds no
						// http2.StreamError.
						t.Errorf("the client got %v, of class %q; want a stream error, PROTOCOL_ERROR", err, got)
					}
				case <-time.After(bound):
					t.Fatalf("the client did not return within %v", bound)
				}
			})
		})
	}
}

// A handler's goroutine that reads the request body after the handler
// returned, while the client still sends it, gets an error, not the
// client's bytes: the stream error (NO_ERROR) of the reset with which
// net/http's server tells the client it wants no more.
func TestRequestBodyReadAfterReturn(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		kept := make(chan io.Reader, 1)
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			kept <- r.Body
		}))
		pr, pw := io.Pipe()
		defer pw.Close()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", pr)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp.Body)
		body := <-kept
		go pw.Write([]byte("late")) // fails once the transport closes the pipe
		done := make(chan error, 1)
		go func() {
			_, err := body.Read(make([]byte, 4))
			done <- err
		}()
		select {
		case err := <-done:
			if got := errorClass(err); got != "stream error, NO_ERROR" {
				t.Errorf("a read of the request body after the handler returned: %v, of class %q; want a stream error, NO_ERROR", err, got)
			}
		case <-time.After(bound):
			t.Fatal("a read of the request body after the handler returned waits")
		}
	})
}

// The response body's Read after Close fails, before the body's end.
func TestResponseReadAfterClose(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		resp, err := hc.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp.Body.Close() // twice: no panic
		if n, err := resp.Body.Read(make([]byte, 4)); err == nil || err == io.EOF || n != 0 {
			t.Errorf("Read after Close: %d, %v", n, err)
		}
	})
}

// The response body's Read after Close fails, after the body's end too,
// as net/http's HTTP/2 client's does: a closed body reads nothing, not
// even io.EOF.
func TestResponseReadAfterCloseAtEnd(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "abc")
		}))
		resp, err := hc.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "abc" {
			t.Fatalf("ReadAll: %q, %v", b, err)
		}
		resp.Body.Close()
		if n, err := resp.Body.Read(make([]byte, 4)); err == nil || err == io.EOF || n != 0 {
			t.Errorf("Read after Close: %d, %v", n, err)
		}
	})
}

// http.Client.Timeout ends the exchange at once, before the head or in
// the body, though the handler ignores its context; the handler's
// context ends.
func TestClientTimeout(t *testing.T) {
	for _, afterHead := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterHead=%v", afterHead), func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				h := newBlockingHandler(t, afterHead)
				hc, base := tr.client(t, h)
				hc.Timeout = 100 * time.Millisecond
				start := time.Now()
				resp, err := hc.Get(base + "/x")
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				var timeout interface{ Timeout() bool }
				if !errors.As(err, &timeout) || !timeout.Timeout() {
					t.Errorf("the client got %v, want a timeout", err)
				}
				if took := time.Since(start); took > bound {
					t.Errorf("the client returned after %v", took)
				}
				waitFor(t, h.ctxEnded, "the handler's context's end")
			})
		})
	}
}

// Redirects: http.Client replays a 307's body through GetBody, and
// without GetBody returns the 307 itself.
func TestRedirectWithBody(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			if r.URL.Path == "/a" {
				http.Redirect(w, r, "/b", http.StatusTemporaryRedirect)
				return
			}
			fmt.Fprintf(w, "%s %s %q %d", r.Method, r.URL.Path, b, r.ContentLength)
		}))
		resp, err := hc.Post(base+"/a", "text/plain", strings.NewReader("payload"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := drain(resp.Body); err != nil || got != `POST /b "payload" 7` {
			t.Errorf("with GetBody: %s %q %v", resp.Status, got, err)
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/a", io.NopCloser(strings.NewReader("payload")))
		resp, err = hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp.Body)
		if resp.StatusCode != http.StatusTemporaryRedirect {
			t.Errorf("without GetBody: %s", resp.Status)
		}
	})
}
