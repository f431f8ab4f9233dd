package inprochttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strings"
	"sync"
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

// traceCases are requests whose client trace must see the same events,
// in the same order, in-process as over net/http's HTTP/2 client: each
// field of the head as the client writes it (pseudo-header fields
// first; the others in the header map's order, so each case has one
// key at most), the head written, the request written, the first byte
// of the response, and its 1xx heads.
var traceCases = []struct {
	name    string
	request func(base string) *http.Request
	handler http.HandlerFunc
}{
	{
		name: "get",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/p?q", nil)
			req.Header.Set("X-A", "1")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") },
	},
	{
		name: "post-read",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/p", strings.NewReader("body"))
			req.Header["x-lower"] = []string{"a", "b"}
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, "x")
		},
	},
	{
		name: "put-empty-cookies-agent",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPut, base+"/p", nil)
			req.Header.Set("Cookie", "a=1; b=2")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) {},
	},
	{
		name: "user-agent-trailer",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/p", io.NopCloser(strings.NewReader("body")))
			req.Header["user-agent"] = []string{"mine", "second"}
			req.Trailer = http.Header{"X-Sum": {"1"}, "x-count": {"2"}}
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
		},
	},
	{
		name: "early-hints",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/p", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "x")
		},
	},
	{
		// The request is not written whole: WroteRequest says why.
		name: "body-fails",
		request: func(base string) *http.Request {
			body := io.MultiReader(strings.NewReader("some"), errReader{errors.New("the request body broke")})
			req, _ := http.NewRequest(http.MethodPost, base+"/p", io.NopCloser(body))
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
		},
	},
	{
		// net/http's client sends the body without waiting for 100
		// Continue (its ExpectContinueTimeout is 0), but no more of it
		// than the server's window (1 MiB) until the handler reads: the
		// 100 Continue of the handler's first read comes before the
		// body is written, as in-process, where no byte of it goes
		// before the handler reads.
		name: "expect-continue",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/p", bytes.NewReader(make([]byte, 4<<20)))
			req.Header.Set("Expect", "100-continue")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, "x")
		},
	},
}

// traceEvents is what a client trace saw of req's exchange with h on tr,
// and how the exchange failed, if it did.
func traceEvents(t *testing.T, tr transport, h http.Handler, request func(base string) *http.Request) []string {
	var mu sync.Mutex
	var events []string
	wrote := make(chan struct{})
	add := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, fmt.Sprintf(format, args...))
	}
	trace := &httptrace.ClientTrace{
		WroteHeaderField: func(key string, value []string) { add("WroteHeaderField %s %q", key, value) },
		WroteHeaders:     func() { add("WroteHeaders") },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			add("WroteRequest %s", errorClass(info.Err))
			close(wrote)
		},
		GotFirstResponseByte: func() { add("GotFirstResponseByte") },
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			add("Got1xxResponse %d %v", code, h)
			return nil
		},
		Got100Continue: func() { add("Got100Continue") },
	}
	hc, base := tr.client(t, h)
	req := request(base)
	req = req.WithContext(httptrace.WithClientTrace(t.Context(), trace))
	resp, err := hc.Do(req)
	if err == nil {
		_, err = drain(resp.Body)
	}
	if err != nil {
		add("failed: %s", errorClass(err))
	}
	// net/http's client may tell it after the response's end.
	waitFor(t, wrote, "WroteRequest")
	mu.Lock()
	defer mu.Unlock()
	return events
}

// TestClientTrace runs each of traceCases in-process and over a unix
// socket to net/http's HTTP/2 server, and compares what the client's
// trace saw. net/http's client tells of its writing (Wrote...) on a
// goroutine of its own and of the response on another, so that after
// the head's fields the two interleave as they happen to: each is
// compared apart, in its order.
func TestClientTrace(t *testing.T) {
	for _, c := range traceCases {
		t.Run(c.name, func(t *testing.T) {
			got := traceEvents(t, transports[0], c.handler, c.request)
			want := traceEvents(t, transports[1], c.handler, c.request)
			gotWrites, gotReads := splitWrites(got)
			wantWrites, wantReads := splitWrites(want)
			if !slices.Equal(gotWrites, wantWrites) || !slices.Equal(gotReads, wantReads) {
				t.Errorf("in-process:\n\t%s\nnet/http:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}

// splitWrites returns the events that tell of the request's writing, and
// the others, each in order.
func splitWrites(events []string) (writes, others []string) {
	for _, e := range events {
		if strings.HasPrefix(e, "Wrote") {
			writes = append(writes, e)
		} else {
			others = append(others, e)
		}
	}
	return writes, others
}
