package inprochttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// An exchangeCase is a request and a handler whose exchange must look the
// same on every transport, to the client and to the handler.
type exchangeCase struct {
	name    string
	request func(base string) *http.Request // a GET of /x if nil
	handler func(w http.ResponseWriter, r *http.Request, saw func(key string, value any))
}

// An outcome is what one exchange looked like, from both ends.
type outcome struct {
	Err           string // RoundTrip's, as errorClass tells it
	Status        string
	Proto         string
	Header        http.Header
	ContentLength int64
	Body          string
	BodyErr       string // the body's read's, as errorClass tells it
	Trailer       http.Header
	Informational []string   // 1xx responses: code and header
	Saw           []sawValue // what the handler saw, in order
}

type sawValue struct {
	Key   string
	Value any
}

var exchangeCases = []exchangeCase{
	{
		name: "request",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/a%2Fb/c?q=1&r=%20", nil)
			req.Header.Set("X-One", "1")
			req.Header["x-lower"] = []string{"lower"}
			req.Header.Add("X-Two", "a")
			req.Header.Add("X-Two", "b")
			req.Header.Set("Connection", "keep-alive") // connection-specific: not carried
			req.Header.Set("Content-Length", "12")     // not the body's: replaced
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("method", r.Method)
			saw("proto", fmt.Sprint(r.Proto, r.ProtoMajor, r.ProtoMinor))
			saw("host", r.Host)
			saw("url", fmt.Sprintf("%q %q %q", r.URL.Path, r.URL.RawPath, r.URL.RawQuery))
			saw("requestURI", r.RequestURI)
			saw("contentLength", r.ContentLength)
			saw("header", r.Header)
			n, err := r.Body.Read(make([]byte, 1))
			saw("body", fmt.Sprint(n, err))
			saw("trailer", r.Trailer)
			saw("tls", r.TLS == nil)
			_, hasDeadline := r.Context().Deadline()
			saw("deadline", hasDeadline)
		},
	},
	{
		name: "text",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "hello, world") // Content-Type sniffed, Content-Length counted
		},
	},
	{
		name:    "empty",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {},
	},
	{
		name: "flushed-empty",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("X-Before", "yes")
			w.(http.Flusher).Flush()
			w.Header().Set("X-After", "no") // too late
		},
	},
	{
		name: "status-and-header",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			h := w.Header()
			h.Set("X-A", "1")
			h.Add("X-Multi", "a")
			h.Add("X-Multi", "b")
			h["x-lower"] = []string{"canonical on arrival"}
			h.Set("Connection", "close")      // connection-specific: not carried
			h.Set("X-Bad", "line\nbreak")     // cannot be carried: left out
			h["X-Empty"] = nil                // no value: not carried
			h.Set("Content-Type", "text/x-a") // not sniffed
			w.WriteHeader(http.StatusCreated)
			h.Set("X-A", "changed after WriteHeader") // too late
			io.WriteString(w, "created")
			w.(http.Flusher).Flush()
			io.WriteString(w, ", and more")
		},
	},
	{
		// net/http's server leaves Connection out of a final head, and
		// Transfer-Encoding but "trailers"; the other fields RFC 9113
		// calls connection-specific reach its client.
		name: "connection-specific-fields",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			setConnectionFields(w.Header())
			io.WriteString(w, "ok")
		},
	},
	{
		name: "no-content-type",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["Content-Type"] = nil // asks for no sniffing
			io.WriteString(w, "<html>")
		},
	},
	{
		name: "declared-trailers",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Trailer", "X-T1, x-t2, Content-Length, If-Match")
			io.WriteString(w, "body")
			w.Header().Set("X-T1", "one")
			w.Header().Set("X-Undeclared", "not sent")
			w.Header().Set("If-Match", "not sent")
			// X-T2 declared and never set: not sent; Content-Length and
			// If-* may not be trailers.
		},
	},
	{
		name: "prefix-trailers",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Trailer", "X-Both")
			io.WriteString(w, "body")
			w.(http.Flusher).Flush()
			w.Header().Set("X-Both", "declared")
			w.Header().Set(http.TrailerPrefix+"X-Both", "prefix wins")
			w.Header().Add(http.TrailerPrefix+"X-Late", "v1")
			w.Header().Add(http.TrailerPrefix+"X-Late", "v2")
			w.Header()[http.TrailerPrefix+"x-lower"] = []string{"canonical"}
			w.Header().Set(http.TrailerPrefix+"Host", "not a trailer")
			w.Header().Set(http.TrailerPrefix+"If-None-Match", "not a trailer")
		},
	},
	{
		name: "trailers-only",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set(http.TrailerPrefix+"Grpc-Status", "5")
		},
	},
	{
		name: "no-content",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusNoContent)
			_, err := io.WriteString(w, "x")
			saw("write", errors.Is(err, http.ErrBodyNotAllowed))
		},
	},
	{
		name: "not-modified",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusNotModified)
		},
	},
	{
		name: "head",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodHead, base+"/x", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			n, err := io.WriteString(w, "discarded")
			saw("write", fmt.Sprint(n, err))
		},
	},
	{
		name: "content-length",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
			_, err := io.WriteString(w, "!")
			saw("write beyond", errorClass(err))
		},
	},
	{
		name: "post",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("payload"))
			req.Header.Set("Content-Type", "text/plain")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("contentLength", r.ContentLength)
			saw("header", r.Header)
			b, err := io.ReadAll(r.Body)
			saw("body", fmt.Sprint(string(b), err))
			n, err := r.Body.Read(make([]byte, 1))
			saw("read after the end", fmt.Sprint(n, err))
			io.Copy(w, strings.NewReader(strings.ToUpper(string(b))))
		},
	},
	{
		name: "post-empty",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", http.NoBody)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("contentLength", r.ContentLength)
			saw("header", r.Header)
			b, err := io.ReadAll(r.Body)
			saw("body", fmt.Sprint(string(b), err))
		},
	},
	{
		name: "request-trailers",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPut, base+"/x", nil)
			req.Trailer = http.Header{"X-Sum": nil, "X-Unset": nil}
			req.Body = io.NopCloser(&trailingReader{r: strings.NewReader("streamed, length unknown"), set: func() { req.Trailer.Set("X-Sum", "42") }})
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("contentLength", r.ContentLength)
			saw("trailer before", r.Trailer.Clone())
			b, err := io.ReadAll(r.Body)
			saw("body", fmt.Sprint(string(b), err))
			saw("trailer after", r.Trailer)
		},
	},
	{
		name: "early-hints",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("X-Final", "yes")
			io.WriteString(w, "ok")
		},
	},
	{
		name: "large",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Type", "application/octet-stream")
			chunk := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
			for range 20 {
				if _, err := io.WriteString(w, chunk); err != nil {
					saw("write", err)
					return
				}
			}
		},
	},
	{
		name: "panic-before-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "unflushed: lost")
			panic("boom")
		},
	},
	{
		name: "panic-after-flush",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "flushed")
			w.(http.Flusher).Flush()
			io.WriteString(w, "unflushed: lost")
			panic("boom")
		},
	},
	{
		name: "abort-handler",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "flushed")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		},
	},
	{
		name: "response-controller",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			rc := http.NewResponseController(w)
			saw("full duplex", rc.EnableFullDuplex())
			io.WriteString(w, "a")
			saw("flush", rc.Flush())
			_, _, err := rc.Hijack()
			saw("hijack", err != nil)
		},
	},
	{
		// net/http's HTTP/2 writer is an http.Pusher; Go's client
		// disables push, so a push that passes its checks fails with
		// http.ErrNotSupported, one that does not with why.
		name: "push",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			p, ok := w.(http.Pusher)
			saw("pusher", ok)
			if !ok {
				return
			}
			for _, push := range []struct {
				name   string
				target string
				opts   *http.PushOptions
			}{
				{"path", "/style.css", nil},
				{"url", "http://" + r.Host + "/style.css", &http.PushOptions{Method: http.MethodHead, Header: http.Header{"Accept": {"text/css"}}}},
				{"relative", "style.css", nil},
				{"other-scheme", "https://" + r.Host + "/style.css", nil},
				{"no-host", "http:///style.css", nil},
				{"unparsable", "/%zz", nil},
				{"post", "/style.css", &http.PushOptions{Method: http.MethodPost}},
				{"content-length", "/style.css", &http.PushOptions{Header: http.Header{"Content-Length": {"0"}}}},
				{"pseudo-header", "/style.css", &http.PushOptions{Header: http.Header{":path": {"/x"}}}},
				{"connection-specific", "/style.css", &http.PushOptions{Header: http.Header{"Keep-Alive": {"1"}}}},
				{"te", "/style.css", &http.PushOptions{Header: http.Header{"Te": {"gzip"}}}},
			} {
				saw(push.name, errorClass(p.Push(push.target, push.opts)))
			}
		},
	},
	// Keys the handler sets in lower case, straight in the map:
	// net/http's server reads only canonical keys for itself, and sends
	// every key lower-cased, so its client merges them with what the
	// server adds.
	{
		name: "lower-content-type",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["content-type"] = []string{"a/b"} // sniffed all the same
			io.WriteString(w, "ok")
		},
	},
	{
		// The client lists what it declares, but the server declares
		// nothing: X-T is no trailer.
		name: "lower-trailer",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["trailer"] = []string{"X-T"}
			io.WriteString(w, "ok")
			w.Header()["X-T"] = []string{"tv"}
			w.Header()["Trailer:X-U"] = []string{"uv"}
		},
	},
	{
		name: "lower-connection",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["connection"] = []string{"close"}
			w.Header()["Connection"] = []string{"keep-alive"} // left out
			io.WriteString(w, "ok")
		},
	},
	{
		// A 1xx head leaves out only the canonical Content-Length and
		// Transfer-Encoding; in lower case they are sent, a
		// Transfer-Encoding only as "trailers".
		name: "lower-fields-informational",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			h := w.Header()
			h["content-length"] = []string{"7"}
			h["Content-Length"] = []string{"8"}
			h["transfer-encoding"] = []string{"chunked", "trailers"}
			h["Transfer-Encoding"] = []string{"trailers"}
			w.WriteHeader(http.StatusEarlyHints)
			delete(h, "content-length")
			delete(h, "Content-Length")
			io.WriteString(w, "ok")
		},
	},
}

// setConnectionFields sets in h a field of each name RFC 9113 calls
// connection-specific, Transfer-Encoding with "trailers" among other
// codings.
func setConnectionFields(h http.Header) {
	h.Set("Connection", "keep-alive")
	h.Set("Keep-Alive", "timeout=5")
	h.Set("Proxy-Connection", "keep-alive")
	h.Set("Upgrade", "h2c")
	h["Transfer-Encoding"] = []string{"chunked", "trailers", "gzip"}
}

// trailingReader reads r, and calls set as it returns io.EOF, as a client
// that computes its trailers from its body does.
type trailingReader struct {
	r   io.Reader
	set func()
}

func (t *trailingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err == io.EOF {
		t.set()
	}
	return n, err
}

// TestSameExchange runs every exchangeCase on every transport and checks
// that the in-process one looks as net/http's HTTP/2 server over a socket
// does, to the client and to the handler.
func TestSameExchange(t *testing.T) {
	for _, c := range exchangeCases {
		t.Run(c.name, func(t *testing.T) {
			var got []outcome
			for _, tr := range transports {
				got = append(got, run(t, tr, c))
			}
			want := got[len(got)-1] // the socket's
			for i, o := range got[:len(got)-1] {
				if !reflect.DeepEqual(o, want) {
					t.Errorf("%s and %s differ:\n%s", transports[i].name, transports[len(got)-1].name, diff(o, want))
				}
			}
		})
	}
}

// TestHeaderKeysDifferingInCase: keys of a handler's header map that
// differ only in case reach the client as one field whose values come
// in the order of the sorted keys, as net/http's server sends them, in
// a 1xx head and in the final one, every time.
func TestHeaderKeysDifferingInCase(t *testing.T) {
	c := exchangeCase{
		name: "keys-differing-in-case",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			for _, k := range []string{"x-lower", "X-Lower", "X-LOWER", "x-LOWER", "X-lower"} {
				w.Header()[k] = []string{"from " + k}
			}
			w.WriteHeader(http.StatusEarlyHints)
			w.Header()["x-final"] = []string{"lower"}
			w.Header()["X-Final"] = []string{"canonical"}
		},
	}
	want := run(t, transports[1], c)
	for range 20 { // map order would show in a few
		if got := run(t, transports[0], c); !reflect.DeepEqual(got, want) {
			t.Fatalf("in-process and net/http differ:\n%s", diff(got, want))
		}
	}
}

// run runs c on tr and returns the outcome.
func run(t *testing.T, tr transport, c exchangeCase) outcome {
	var o outcome
	var mu sync.Mutex
	saw := func(key string, value any) {
		mu.Lock()
		defer mu.Unlock()
		o.Saw = append(o.Saw, sawValue{key, value})
	}
	// What the handler saw is read once it returned: a client may have
	// its whole response (a declared length, say) while the handler goes
	// on writing.
	var started, returned sync.Once
	handlerStarted, handlerReturned := make(chan struct{}), make(chan struct{})
	hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Do(func() { close(handlerStarted) })
		defer returned.Do(func() { close(handlerReturned) })
		c.handler(w, r, saw)
	}))
	req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
	if c.request != nil {
		req = c.request(base)
	}
	var informational []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		informational = append(informational, fmt.Sprint(code, h))
		return nil
	}}
	req = req.WithContext(httptrace.WithClientTrace(t.Context(), trace))
	resp, err := hc.Do(req)
	if err != nil {
		o.Err = errorClass(err)
	} else {
		o.Status, o.Proto, o.ContentLength = resp.Status, resp.Proto, resp.ContentLength
		o.Header = resp.Header.Clone()
		delete(o.Header, "Date") // the socket's alone
		body, err := drain(resp.Body)
		o.Body, o.BodyErr, o.Trailer = body, errorClass(err), resp.Trailer
	}
	o.Informational = informational
	select {
	case <-handlerStarted:
		select {
		case <-handlerReturned:
		case <-time.After(5 * time.Second): // one that outlives its exchange
		}
	default: // refused before any handler ran
	}
	mu.Lock()
	defer mu.Unlock()
	return o
}

// errorClass is what a program can tell of err without reading its
// words, as the tests compare it: the HTTP/2 stream error errors.As finds
// in it, with its code; a connection error, whose type net/http does not
// export, by the RFC's term and code its words hold; else the first of
// the errors net/http and the packages it uses return that errors.Is
// finds in it; "error" for none of these, "" for nil.
func errorClass(err error) string {
	if err == nil {
		return ""
	}
	var se http2.StreamError
	if errors.As(err, &se) {
		return "stream error, " + se.Code.String()
	}
	if msg := err.Error(); strings.Contains(msg, "connection error") {
		for _, code := range []http2.ErrCode{http2.ErrCodeProtocol, http2.ErrCodeInternal, http2.ErrCodeCompression} {
			if strings.Contains(msg, code.String()) {
				return "connection error, " + code.String()
			}
		}
		return "connection error"
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "error"
}

// sentinels are the errors errorClass looks for, the more specific first.
var sentinels = []struct {
	name string
	err  error
}{
	{"os.ErrDeadlineExceeded", os.ErrDeadlineExceeded},
	{"context.DeadlineExceeded", context.DeadlineExceeded},
	{"context.Canceled", context.Canceled},
	{"http.ErrAbortHandler", http.ErrAbortHandler},
	{"http.ErrBodyReadAfterClose", http.ErrBodyReadAfterClose},
	{"http.ErrContentLength", http.ErrContentLength},
	{"http.ErrBodyNotAllowed", http.ErrBodyNotAllowed},
	{"http.ErrNotSupported", http.ErrNotSupported},
	{"http.ErrHandlerTimeout", http.ErrHandlerTimeout},
	{"io.ErrUnexpectedEOF", io.ErrUnexpectedEOF},
	{"io.EOF", io.EOF},
}

// diff lists the fields in which a and b differ.
func diff(a, b outcome) string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if !reflect.DeepEqual(fa, fb) {
			out = append(out, fmt.Sprintf("  %s:\n    %#v\n    %#v", va.Type().Field(i).Name, fa, fb))
		}
	}
	return strings.Join(out, "\n")
}
