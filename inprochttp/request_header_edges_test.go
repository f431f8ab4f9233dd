package inprochttp_test

import (
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// requestHeaderCases are requests whose header net/http's HTTP/2 client
// and server change on the way; the handler must see what it would see
// over a socket.
var requestHeaderCases = []exchangeCase{
	{
		// The client splits cookies into crumbs, the server joins them
		// with "; " (RFC 9113, section 8.2.3): a handler's
		// Header.Get("Cookie") sees them all.
		name: "cookies-joined",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Header.Add("Cookie", "a=1")
			req.Header.Add("Cookie", "b=2; c=3")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("cookie", r.Header.Get("Cookie"))
			saw("header", r.Header)
		},
	},
	// The client sends each cookie-pair in a field of its own and
	// drops an empty last one, so an empty Cookie value sends no
	// field at all: the handler sees no Cookie.
	headerCase("cookie-empty", func(h http.Header) { h.Set("Cookie", "") }),
	// Only the first User-Agent is sent.
	headerCase("user-agent-first", func(h http.Header) { h["User-Agent"] = []string{"first", "second"} }),
	// An empty User-Agent is net/http's documented way to send none.
	headerCase("user-agent-empty", func(h http.Header) { h.Set("User-Agent", "") }),
	{
		// The server takes Expect: 100-continue for itself: the handler
		// does not see it, and its first read sends 100 Continue, which
		// the client's trace sees.
		name: "expect-continue",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("payload"))
			req.Header.Set("Expect", "100-continue")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("header", r.Header)
			b := make([]byte, 7)
			n, _ := r.Body.Read(b)
			saw("read", string(b[:n]))
		},
	},
	// net/http's server sends no 100 Continue once a head has gone, a
	// 1xx one included (golang.org/issue/14030): the handler's own 103
	// or 100 is all the client gets before the final head.
	expectContinueAfter("early-hints", func(w http.ResponseWriter) {
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
	}),
	expectContinueAfter("explicit-continue", func(w http.ResponseWriter) { w.WriteHeader(http.StatusContinue) }),
	{
		// The client sends an internationalized host in punycode.
		name: "host-idn",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Host = "bücher.example"
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("host", r.Host)
		},
	},
	// Cases that hold: pinned.

	// Empty values among others send nothing; a pair left empty
	// between semicolons is sent, empty, and joined as it is.
	headerCase("cookies-some-empty", func(h http.Header) { h["Cookie"] = []string{"", "a=1;", "", "; ", ";b=2;; c=3", ""} }),
	// "; " is one empty pair before the semicolon, which is sent.
	headerCase("cookie-empty-pair", func(h http.Header) { h.Set("Cookie", "; ") }),
	// Only empty values: no field.
	headerCase("cookies-all-empty", func(h http.Header) { h["Cookie"] = []string{"", ""} }),
	{
		name: "te-trailers",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Header.Set("Te", "trailers")
			req.Header.Set("Keep-Alive", "timeout=5")
			req.Header.Set("Proxy-Connection", "keep-alive")
			req.Header.Set("Connection", "close")
			req.Header.Set("Host", "ignored")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("header", r.Header)
			saw("host", r.Host)
		},
	},
	headerCase("cookie-one-value", func(h http.Header) { h.Set("Cookie", "a=1; b=2") }),
	// Keys a client sets in lower case, straight in the map: net/http's
	// HTTP/2 client reads only the canonical ones for itself (the
	// connection-specific fields, Host, Content-Length) and sends the
	// others lower-cased, so the handler sees them canonical.
	lowerRequestCase("lower-content-length", func(h http.Header) { h["content-length"] = []string{"99"} }),
	lowerRequestCase("lower-host", func(h http.Header) { h["host"] = []string{"other.example"} }),
	lowerRequestCase("lower-content-type", func(h http.Header) { h["content-type"] = []string{"a/b"} }),
	lowerRequestCase("lower-te", func(h http.Header) { h["te"] = []string{"trailers"} }),
	lowerRequestCase("lower-connection", func(h http.Header) { h["connection"] = []string{"close"} }),
	lowerRequestCase("lower-keep-alive", func(h http.Header) { h["keep-alive"] = []string{"timeout=5"} }),
	// net/http's server answers "OPTIONS *" itself, 200 with
	// Content-Length 0, having read up to 4 KiB of a body; the handler
	// never runs. A TE it refuses is refused first.
	optionsStar("options-star", "", nil),
	optionsStar("options-star-body", "reserved for future use", nil),
	optionsStar("options-star-te-gzip", "", func(h http.Header) { h.Set("Te", "gzip") }),
	{
		// Any other target of OPTIONS is the handler's.
		name: "options-path",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodOptions, base+"/x", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("requestURI", r.RequestURI)
			w.WriteHeader(http.StatusTeapot)
		},
	},
}

// optionsStar is an "OPTIONS *" with body, if not empty, whose header
// set changes if it is not nil, and whose handler says it ran.
func optionsStar(name, body string, set func(h http.Header)) exchangeCase {
	return exchangeCase{
		name: name,
		request: func(base string) *http.Request {
			var b io.Reader
			if body != "" {
				b = strings.NewReader(body)
			}
			req, _ := http.NewRequest(http.MethodOptions, base, b)
			req.URL.Path = "*"
			if set != nil {
				set(req.Header)
			}
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("handler ran", r.RequestURI)
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "the handler's answer")
		},
	}
}

// expectContinueAfter is a POST that expects 100-continue, whose handler
// reads the body once head has written a head.
func expectContinueAfter(name string, head func(w http.ResponseWriter)) exchangeCase {
	return exchangeCase{
		name: "expect-continue-after-" + name,
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("payload"))
			req.Header.Set("Expect", "100-continue")
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			head(w)
			b, err := io.ReadAll(r.Body)
			saw("read", fmt.Sprint(string(b), err))
		},
	}
}

// headerCase is a GET of /x whose header set changes, and whose handler
// sees the header.
func headerCase(name string, set func(h http.Header)) exchangeCase {
	return exchangeCase{
		name: name,
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			set(req.Header)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("header", r.Header)
		},
	}
}

// lowerRequestCase is a POST of a short body to /x whose header set
// changes, and whose handler sees the header, the Host, the length and
// the body.
func lowerRequestCase(name string, set func(h http.Header)) exchangeCase {
	return exchangeCase{
		name: name,
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("body"))
			set(req.Header)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			saw("header", r.Header)
			saw("host", r.Host)
			saw("contentLength", r.ContentLength)
			b, err := io.ReadAll(r.Body)
			saw("body", fmt.Sprint(string(b), err))
		},
	}
}

// TestRequestHeaderEdges runs each of requestHeaderCases in-process and
// over a unix socket to net/http's HTTP/2 server, and compares.
func TestRequestHeaderEdges(t *testing.T) {
	for _, c := range requestHeaderCases {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, transports[0], c)
			want := run(t, transports[1], c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("in-process and net/http differ:\n%s", diff(got, want))
			}
		})
	}
}

// TestRequestRefused: requests net/http's HTTP/2 client refuses to send,
// or its server refuses to serve (400), never reach the handler.
func TestRequestRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*http.Request)
	}{
		{"upgrade", func(r *http.Request) { r.Header.Set("Upgrade", "websocket") }},
		{"connection-upgrade", func(r *http.Request) { r.Header.Set("Connection", "Upgrade") }},
		{"transfer-encoding-gzip", func(r *http.Request) { r.Header.Set("Transfer-Encoding", "gzip") }},
		{"te-gzip", func(r *http.Request) { r.Header.Set("Te", "gzip") }},
		{"host-crlf", func(r *http.Request) { r.Host = "inproc\r\nX-Injected: yes" }},
		{"host-space", func(r *http.Request) { r.Host = "in proc" }},
		{"trailer-content-length", func(r *http.Request) { r.Trailer = http.Header{"Content-Length": nil} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				var ran atomic.Bool
				var host atomic.Value
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					ran.Store(true)
					host.Store(r.Host)
				}))
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", strings.NewReader("body"))
				tc.modify(req)
				resp, err := hc.Do(req)
				if err == nil {
					drain(resp.Body)
					if resp.StatusCode != http.StatusBadRequest {
						t.Errorf("the request was served: %s", resp.Status)
					}
				}
				if ran.Load() {
					t.Errorf("the handler ran (Host %q)", host.Load())
				}
			})
		})
	}
}
