package inprochttp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/inprochttp"
)

// headerLimits are a server's MaxHeaderBytes and a client's
// MaxResponseHeaderBytes; 0 is net/http's default for each.
type headerLimits struct {
	header   int
	response int64
}

// limitedClient is tr's client of h with limits l: in-process, through
// WithMaxHeaderBytes and WithMaxResponseHeaderBytes; over a unix socket,
// through net/http's server's MaxHeaderBytes and its client transport's
// MaxResponseHeaderBytes, which localgrpc.HTTPClient does not expose.
func limitedClient(t *testing.T, tr transport, h http.Handler, l headerLimits) (*http.Client, string) {
	if tr.name == "inproc" {
		return &http.Client{Transport: inprochttp.NewTransport(h, inprochttp.WithErrorLog(testLog(t)),
			inprochttp.WithMaxHeaderBytes(l.header), inprochttp.WithMaxResponseHeaderBytes(l.response))}, "http://localhost"
	}
	path := strings.TrimPrefix(unixServer(t, &http.Server{Handler: h, ErrorLog: testLog(t), MaxHeaderBytes: l.header}), "unix:")
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	var d net.Dialer
	rt := &http.Transport{
		Protocols:              &protocols,
		DisableCompression:     true,
		MaxResponseHeaderBytes: l.response,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
	}
	t.Cleanup(rt.CloseIdleConnections) // before the server closes
	return &http.Client{Transport: rt}, "http://localhost"
}

// fieldsSize is what HTTP/2 counts of a header list of name, value
// pairs: each field's name and value and 32 bytes (RFC 9113, section
// 6.5.2; RFC 7541, section 4.1).
func fieldsSize(pairs ...string) int {
	n := 0
	for i := 0; i < len(pairs); i += 2 {
		n += len(pairs[i]) + len(pairs[i+1]) + 32
	}
	return n
}

// padTo is the values of "X-Pad" fields that bring a header list of size
// bytes to target: as many of padValue as fit, then one of what is left.
// HPACK sends a field it has sent before as an index into its table, so
// that a list of many megabytes crosses to net/http quickly, which one
// long value, Huffman-coded byte by byte, does not under the race
// detector.
func padTo(size, target int) []string {
	left := target - size
	empty, full := fieldsSize("x-pad", ""), fieldsSize("x-pad", padValue)
	var vv []string
	for left-full >= empty {
		vv = append(vv, padValue)
		left -= full
	}
	return append(vv, strings.Repeat("p", left-empty))
}

var padValue = strings.Repeat("p", 100)

// warm sends hc a request and reads its answer, so that an HTTP/2 client
// has the server's SETTINGS, its header list limit among them, as any
// client but on a new connection's first request has: on that request
// net/http's client, not knowing the limit yet, sends what the server
// then answers 431 or, far over it, fails the connection with.
func warm(t *testing.T, hc *http.Client, base string) {
	t.Helper()
	resp, err := hc.Get(base + "/warm")
	if err != nil {
		t.Fatal(err)
	}
	drain(resp.Body)
}

// requestShapes are requests whose header list HTTP/2 counts in every
// part: pseudo-header fields, the User-Agent the client adds, cookies a
// field each, Content-Length, the "trailer" field, an Expect the server
// takes for itself. wire is what the client sends but for X-Pad.
var requestShapes = []struct {
	name    string
	request func(base string) *http.Request
	wire    []string
}{
	{
		name: "get",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			return req
		},
		wire: []string{":authority", "localhost", ":method", "GET", ":path", "/x", ":scheme", "http",
			"user-agent", "Go-http-client/2.0"},
	},
	{
		name: "cookies",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Header.Set("Cookie", "a=1; b=2; c=3; d=4; e=5; f=6; g=7; h=8")
			return req
		},
		wire: []string{":authority", "localhost", ":method", "GET", ":path", "/x", ":scheme", "http",
			"cookie", "a=1", "cookie", "b=2", "cookie", "c=3", "cookie", "d=4",
			"cookie", "e=5", "cookie", "f=6", "cookie", "g=7", "cookie", "h=8",
			"user-agent", "Go-http-client/2.0"},
	},
	{
		name: "post-expect-trailer",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/x", strings.NewReader("abc"))
			req.Header.Set("Expect", "100-continue")
			req.Trailer = http.Header{"X-T": nil}
			return req
		},
		wire: []string{":authority", "localhost", ":method", "POST", ":path", "/x", ":scheme", "http",
			"trailer", "X-T", "expect", "100-continue", "content-length", "3", "user-agent", "Go-http-client/2.0"},
	},
}

// TestRequestHeaderLimit: a request whose header list, counted as HTTP/2
// counts it, is over the server's MaxHeaderBytes and the 320 bytes
// net/http's HTTP/2 server adds to it for SETTINGS_MAX_HEADER_LIST_SIZE
// fails in the client's RoundTrip and never reaches the handler, as
// net/http's client refuses to send it; one at the limit is served.
func TestRequestHeaderLimit(t *testing.T) {
	type testCase struct {
		name    string
		limits  headerLimits
		request func(base string) *http.Request
		refused bool
	}
	var cases []testCase
	for _, maxHeaderBytes := range []int{0, -1, 4096} {
		limit := maxHeaderBytes + 320
		if maxHeaderBytes <= 0 {
			limit = http.DefaultMaxHeaderBytes + 320
		}
		for _, shape := range requestShapes {
			for _, over := range []int{0, 1} {
				cases = append(cases, testCase{
					name:   shape.name + "/maxHeaderBytes=" + strconv.Itoa(maxHeaderBytes) + "/over=" + strconv.Itoa(over),
					limits: headerLimits{header: maxHeaderBytes},
					request: func(base string) *http.Request {
						req := shape.request(base)
						req.Header["X-Pad"] = padTo(fieldsSize(shape.wire...), limit+over)
						return req
					},
					refused: over > 0,
				})
			}
		}
	}
	cases = append(cases, testCase{ // the outside tester's
		name: "8MiB",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.Header.Set("X-Big", strings.Repeat("a", 8<<20))
			return req
		},
		refused: true,
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				ran := make(chan struct{}, 1)
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/x" {
						ran <- struct{}{}
					}
					io.Copy(io.Discard, r.Body)
				}), tc.limits)
				warm(t, hc, base)
				resp, err := hc.Do(tc.request(base).WithContext(t.Context()))
				if err == nil {
					drain(resp.Body)
				}
				served := len(ran) > 0
				switch {
				case tc.refused && (err == nil || served):
					t.Errorf("over the limit: error %v, handler ran %v; want an error and no handler", err, served)
				case !tc.refused && (err != nil || resp.StatusCode != http.StatusOK || !served):
					t.Errorf("at the limit: error %v, handler ran %v; want it served", err, served)
				case tc.refused && tr.name == "inproc" && !strings.Contains(err.Error(), "MaxHeaderBytes"):
					t.Errorf("the error does not name the limit: %v", err)
				}
			})
		})
	}
}

// TestResponseHeaderLimit: a response whose head, counted as HTTP/2
// counts it, is over the client's limit fails the client's RoundTrip,
// and the handler's context ends, as net/http's client resets the
// stream; one at the limit is served. The limit is
// MaxResponseHeaderBytes and 320 bytes, 10 MiB by default and 16 MiB for
// 4 GiB or more, as net/http's HTTP/2 client has it.
func TestResponseHeaderLimit(t *testing.T) {
	const date = "Mon, 02 Jan 2006 15:04:05 GMT" // set, so net/http adds none
	// A handler that returns without writing has a Content-Length of 0
	// sent; one that flushes has none, and declares a trailer here.
	shapes := []struct {
		name  string
		flush bool
		wire  []string
	}{
		{"returned", false, []string{":status", "200", "content-type", "text/plain", "date", date, "content-length", "0"}},
		{"flushed", true, []string{":status", "200", "content-type", "text/plain", "date", date, "trailer", "X-T"}},
	}
	type testCase struct {
		name    string
		limits  headerLimits
		flush   bool
		pad     func() []string
		refused bool
	}
	var cases []testCase
	for _, maxResponse := range []int64{0, 4096, 1 << 32} {
		limit := int(maxResponse) + 320
		switch maxResponse {
		case 0:
			limit = 10 << 20
		case 1 << 32:
			limit = 16 << 20 // no setting can say it: net/http's framer's default
		}
		for _, shape := range shapes {
			for _, over := range []int{0, 1} {
				cases = append(cases, testCase{
					name:    shape.name + "/maxResponseHeaderBytes=" + strconv.Itoa(int(maxResponse)) + "/over=" + strconv.Itoa(over),
					limits:  headerLimits{response: maxResponse},
					flush:   shape.flush,
					pad:     func() []string { return padTo(fieldsSize(shape.wire...), limit+over) },
					refused: over > 0,
				})
			}
		}
	}
	cases = append(cases, testCase{ // the outside tester's
		name:    "16MiB",
		pad:     func() []string { return padTo(0, 16<<20) },
		refused: true,
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pad := tc.pad()
			forEach(t, func(t *testing.T, tr transport) {
				ctxEnded := make(chan struct{})
				// Closed only if the client got the response it
				// should not have, so that the handler lets it end.
				release := make(chan struct{})
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/x" {
						return
					}
					h := w.Header()
					h.Set("Content-Type", "text/plain")
					h.Set("Date", date)
					h["X-Pad"] = pad
					if !tc.flush {
						return
					}
					h.Set("Trailer", "X-T")
					w.(http.Flusher).Flush()
					if tc.refused {
						select {
						case <-r.Context().Done():
							close(ctxEnded)
						case <-release:
						}
					}
				}), tc.limits)
				warm(t, hc, base)
				resp, err := hc.Get(base + "/x")
				if err == nil {
					close(release)
					drain(resp.Body)
				} else {
					defer close(release)
				}
				switch {
				case tc.refused && err == nil:
					t.Errorf("over the limit: %s, want an error", resp.Status)
				case !tc.refused && err != nil:
					t.Errorf("at the limit: %v, want it served", err)
				case tc.refused && tr.name == "inproc" && !strings.Contains(err.Error(), "MaxResponseHeaderBytes"):
					t.Errorf("the error does not name the limit: %v", err)
				}
				if tc.refused && tc.flush && err != nil {
					waitFor(t, ctxEnded, "the handler's context's end")
				}
			})
		})
	}
}

// h2Class is the class of an HTTP/2 error, in RFC 9113's terms: a
// stream or connection error and its code; "" for none, "other" for an
// error of neither kind. Both net/http's errors and inprochttp's say
// them.
func h2Class(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	kind := "other"
	switch {
	case strings.Contains(msg, "stream error"):
		kind = "stream error"
	case strings.Contains(msg, "connection error"):
		kind = "connection error"
	}
	for _, code := range []string{"PROTOCOL_ERROR", "COMPRESSION_ERROR", "INTERNAL_ERROR", "CANCEL"} {
		if strings.Contains(msg, code) {
			return kind + ", " + code
		}
	}
	return kind
}

// TestInformationalHeaderLimit: net/http's HTTP/2 client bounds each 1xx
// response's head, a HEADERS frame of its own, by its limit, and so does
// the in-process client. Without a trace's Got1xxResponse, which would
// see them, it bounds all of a response's 1xx heads together, by the
// larger of its limit and MaxResponseHeaderBytes. A 1xx head over fails
// RoundTrip with a stream error (PROTOCOL_ERROR), and the handler's
// context ends. The final head is bounded apart from the 1xx heads.
func TestInformationalHeaderLimit(t *testing.T) {
	type testCase struct {
		name    string
		limits  headerLimits
		trace   bool  // the request's trace has a Got1xxResponse
		sizes   []int // each 1xx head's size, as HTTP/2 counts it
		refused bool
	}
	var cases []testCase
	for _, maxResponse := range []int64{0, 4096, 1 << 32} {
		// perFrame bounds a head; all bounds the 1xx heads together
		// when no trace sees them.
		perFrame, all := int(maxResponse)+320, int(maxResponse)+320
		switch maxResponse {
		case 0:
			perFrame, all = 10<<20, 10<<20
		case 1 << 32:
			perFrame, all = 16<<20, 1<<32 // the framer's default; MaxResponseHeaderBytes
		}
		add := func(name string, trace bool, refused bool, sizes ...int) {
			cases = append(cases, testCase{
				name:    name + "/maxResponseHeaderBytes=" + strconv.FormatInt(maxResponse, 10),
				limits:  headerLimits{response: maxResponse},
				trace:   trace,
				sizes:   sizes,
				refused: refused,
			})
		}
		add("trace/one-at", true, false, perFrame)
		add("trace/one-over", true, true, perFrame+1)
		add("trace/two-at", true, false, perFrame, perFrame)
		add("no-trace/one-over", false, true, perFrame+1)
		if all > perFrame {
			add("no-trace/two-at", false, false, perFrame, perFrame)
			continue
		}
		add("no-trace/one-at", false, false, perFrame)
		add("no-trace/two-sum-at", false, false, all/2, all-all/2)
		add("no-trace/two-sum-over", false, true, all/2, all-all/2+1)
		add("no-trace/three-sum-over", false, true, all/3, all/3, all-2*(all/3)+1)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pads := make([][]string, len(tc.sizes))
			for i, size := range tc.sizes {
				pads[i] = padTo(fieldsSize(":status", "103"), size)
			}
			forEach(t, func(t *testing.T, tr transport) {
				ctxEnded := make(chan struct{})
				// Closed only if the client got the response it
				// should not have, so that the handler lets it end.
				release := make(chan struct{})
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/x" {
						return
					}
					h := w.Header()
					for _, pad := range pads {
						h["X-Pad"] = pad
						w.WriteHeader(http.StatusEarlyHints)
					}
					delete(h, "X-Pad") // a 1xx leaves the header to the final head
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					if tc.refused {
						select {
						case <-r.Context().Done():
							close(ctxEnded)
						case <-release:
						}
					}
				}), tc.limits)
				warm(t, hc, base)
				ctx := t.Context()
				got := 0
				if tc.trace {
					ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
						Got1xxResponse: func(int, textproto.MIMEHeader) error { got++; return nil },
					})
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
				resp, err := hc.Do(req)
				if err == nil {
					close(release)
					drain(resp.Body)
				} else {
					defer close(release)
				}
				switch {
				case tc.refused && err == nil:
					t.Errorf("over the limit: %s, want an error", resp.Status)
				case !tc.refused && err != nil:
					t.Errorf("at the limit: %v, want it served", err)
				case !tc.refused && tc.trace && got != len(tc.sizes):
					t.Errorf("the trace saw %d 1xx responses, want %d", got, len(tc.sizes))
				case tc.refused && h2Class(err) != "stream error, PROTOCOL_ERROR":
					t.Errorf("over the limit: %v, want a stream error with PROTOCOL_ERROR", err)
				case tc.refused && tr.name == "inproc" && !strings.Contains(err.Error(), "MaxResponseHeaderBytes"):
					t.Errorf("the error does not name the limit: %v", err)
				}
				if tc.refused && err != nil {
					waitFor(t, ctxEnded, "the handler's context's end")
				}
			})
		})
	}
}

// TestRequestTrailerLimit: net/http's HTTP/2 client counts a request's
// trailers as HTTP/2 counts them, at the end of the body, and sends them
// only within the server's SETTINGS_MAX_HEADER_LIST_SIZE (MaxHeaderBytes
// and 320 bytes); over it, it resets the stream. The handler's read of
// the body then fails, with no trailer value, and the client's
// RoundTrip fails, or its read of the body if the head came first.
// Trailers at the limit reach the handler.
func TestRequestTrailerLimit(t *testing.T) {
	type testCase struct {
		name         string
		limits       headerLimits
		respondFirst bool // the handler flushes its head before it reads
		pad          []string
		refused      bool
	}
	var cases []testCase
	for _, maxHeaderBytes := range []int{0, 4096} {
		limit := maxHeaderBytes + 320
		if maxHeaderBytes <= 0 {
			limit = http.DefaultMaxHeaderBytes + 320
		}
		for _, respondFirst := range []bool{false, true} {
			for _, over := range []int{0, 1} {
				cases = append(cases, testCase{
					name:         "maxHeaderBytes=" + strconv.Itoa(maxHeaderBytes) + "/respondFirst=" + strconv.FormatBool(respondFirst) + "/over=" + strconv.Itoa(over),
					limits:       headerLimits{header: maxHeaderBytes},
					respondFirst: respondFirst,
					pad:          padTo(0, limit+over),
					refused:      over > 0,
				})
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				type read struct {
					err    error
					values int // of the trailer
				}
				reads := make(chan read, 1)
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/x" {
						return
					}
					if tc.respondFirst {
						w.(http.Flusher).Flush()
					}
					_, err := io.Copy(io.Discard, r.Body)
					reads <- read{err, len(r.Trailer["X-Pad"])}
				}), tc.limits)
				warm(t, hc, base)
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", strings.NewReader("body"))
				req.Trailer = http.Header{"X-Pad": tc.pad}
				resp, err := hc.Do(req)
				if err == nil {
					_, err = drain(resp.Body)
				}
				var got read
				select {
				case got = <-reads:
				case <-time.After(bound):
					t.Fatalf("the handler did not read the body within %v", bound)
				}
				switch {
				case tc.refused && (err == nil || got.err == nil || got.values != 0):
					t.Errorf("over the limit: client's error %v, handler's read %v with %d trailer values; want both to fail, with none", err, got.err, got.values)
				case !tc.refused && (err != nil || got.err != nil || got.values != len(tc.pad)):
					t.Errorf("at the limit: client's error %v, handler's read %v with %d trailer values; want %d values", err, got.err, got.values, len(tc.pad))
				case tc.refused && tr.name == "inproc" && !strings.Contains(err.Error(), "MaxHeaderBytes"):
					t.Errorf("the error does not name the limit: %v", err)
				}
			})
		})
	}
}
