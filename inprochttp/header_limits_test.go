package inprochttp_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/inprochttp"
	"golang.org/x/net/http2/hpack"
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
		// Connection-specific fields net/http's server sends, and
		// counts; Connection it leaves out.
		{"connection-specific", false, []string{":status", "200", "content-type", "text/plain", "date", date, "content-length", "0",
			"keep-alive", "timeout=5", "proxy-connection", "keep-alive", "upgrade", "h2c", "transfer-encoding", "trailers"}},
	}
	type testCase struct {
		name    string
		limits  headerLimits
		flush   bool
		fields  bool // the connection-specific fields
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
					fields:  shape.name == "connection-specific",
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
				f := newRefusable()
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/x" {
						return
					}
					h := w.Header()
					h.Set("Content-Type", "text/plain")
					h.Set("Date", date)
					h["X-Pad"] = pad
					if tc.fields {
						setConnectionFields(h)
					}
					if !tc.flush {
						return
					}
					h.Set("Trailer", "X-T")
					w.(http.Flusher).Flush()
					if tc.refused {
						f.hold(r)
					}
				}), tc.limits)
				warm(t, hc, base)
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/x", nil)
				if err := f.do(t, tr, hc, req, tc.refused); tc.refused && tc.flush && err != nil {
					waitFor(t, f.ctxEnded, "the handler's context's end")
				}
			})
		})
	}
}

// A refusable is a response whose head the client may refuse, and the
// handler that sent it, which waits for what comes of it.
type refusable struct {
	ctxEnded chan struct{} // closed as the handler's context ends
	// release is closed if the client took the response, so that the
	// handler, whose context does not end then, may return.
	release chan struct{}
}

func newRefusable() refusable {
	return refusable{ctxEnded: make(chan struct{}), release: make(chan struct{})}
}

// hold is the handler's part once its head has gone: it waits for its
// context to end, and says so, or for the client to release it.
func (f refusable) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
		close(f.ctxEnded)
	case <-f.release:
	}
}

// do is the client's part: it sends req with hc and reads the response,
// if there is one, to its end. It fails t unless RoundTrip fails if and
// only if refused, in-process with an error that names
// MaxResponseHeaderBytes. It returns RoundTrip's error.
func (f refusable) do(t *testing.T, tr transport, hc *http.Client, req *http.Request, refused bool) error {
	t.Helper()
	resp, err := hc.Do(req)
	if err == nil {
		close(f.release)
		drain(resp.Body)
	} else {
		// Not before the test has seen the handler's context end.
		t.Cleanup(func() { close(f.release) })
	}
	switch {
	case refused && err == nil:
		t.Errorf("over the limit: %s, want an error", resp.Status)
	case !refused && err != nil:
		t.Errorf("at the limit: %v, want it served", err)
	case refused && tr.name == "inproc" && !strings.Contains(err.Error(), "MaxResponseHeaderBytes"):
		t.Errorf("the error does not name the limit: %v", err)
	}
	return err
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
			// Each 1xx head has a Connection field, which net/http's
			// server sends in a 1xx head, and counts.
			pads := make([][]string, len(tc.sizes))
			for i, size := range tc.sizes {
				pads[i] = padTo(fieldsSize(":status", "103", "connection", "keep-alive"), size)
			}
			forEach(t, func(t *testing.T, tr transport) {
				f := newRefusable()
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/x" {
						return
					}
					h := w.Header()
					h.Set("Connection", "keep-alive")
					for _, pad := range pads {
						h["X-Pad"] = pad
						w.WriteHeader(http.StatusEarlyHints)
					}
					delete(h, "X-Pad") // a 1xx leaves the header to the final head
					delete(h, "Connection")
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					if tc.refused {
						f.hold(r)
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
				err := f.do(t, tr, hc, req, tc.refused)
				switch {
				case !tc.refused && tc.trace && got != len(tc.sizes):
					t.Errorf("the trace saw %d 1xx responses, want %d", got, len(tc.sizes))
				case tc.refused && err != nil && errorClass(err) != "stream error, PROTOCOL_ERROR":
					t.Errorf("over the limit: %v, want a stream error with PROTOCOL_ERROR", err)
				}
				if tc.refused && err != nil {
					waitFor(t, f.ctxEnded, "the handler's context's end")
				}
			})
		})
	}
}

// TestResponseHeadFarOverLimit: net/http's HTTP/2 client reads a
// response's head, 1xx or final, through the framer that reads its
// trailers, with the same bound (MaxResponseHeaderBytes and 320 bytes).
// A head over the bound fails RoundTrip with a stream error
// (PROTOCOL_ERROR), unless the framer fails the connection on it
// instead: on a name or value longer than the bound (COMPRESSION_ERROR),
// and on a frame of the head's HPACK block longer than twice what is
// left of the bound as it comes (PROTOCOL_ERROR). The cases keep clear
// of the edges, which hang on bytes HPACK's tables save.
func TestResponseHeadFarOverLimit(t *testing.T) {
	const maxResponse = 1000 // a bound of 1320
	// pads are n fields X-P00, X-P01, ... of valueLen bytes each.
	pads := func(n, valueLen int) http.Header {
		h := make(http.Header)
		for i := range n {
			h.Set(fmt.Sprintf("X-P%02d", i), strings.Repeat("p", valueLen))
		}
		return h
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		class  string
	}{
		// 'p' takes 6 bits in Huffman code: 1300 of them are sent in
		// 975 bytes, and decoded within the bound.
		{"one-field-over", pads(1, 1300), "stream error, PROTOCOL_ERROR"},
		{"value-over-bound", pads(1, 1400), "connection error, COMPRESSION_ERROR"},
		// Its frame, checked before it is decoded, is over twice the
		// bound.
		{"value-far-over-bound", pads(1, 40000), "connection error, PROTOCOL_ERROR"},
		// Fields of 100 bytes each, sent in 83: 25 of them in a frame
		// of about 2080 bytes, 40 in one of about 3330, over twice
		// the bound.
		{"fields-within-twice-the-bound", pads(25, 100), "stream error, PROTOCOL_ERROR"},
		{"fields-over-twice-the-bound", pads(40, 100), "connection error, PROTOCOL_ERROR"},
	} {
		for _, status := range []int{http.StatusOK, http.StatusEarlyHints} {
			t.Run(tc.name+"/status="+strconv.Itoa(status), func(t *testing.T) {
				var got [2]string
				for i, tr := range transports {
					hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if r.URL.Path != "/x" {
							return
						}
						maps.Copy(w.Header(), tc.header)
						w.WriteHeader(status)
						for k := range tc.header {
							w.Header().Del(k) // a 1xx leaves the header to the final head
						}
					}), headerLimits{response: maxResponse})
					warm(t, hc, base)
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/x", nil)
					resp, err := hc.Do(req)
					if err == nil {
						drain(resp.Body)
					}
					got[i] = errorClass(err)
				}
				if got[0] != got[1] || got[1] != tc.class {
					t.Errorf("in-process %q, net/http %q; the case expects %q", got[0], got[1], tc.class)
				}
			})
		}
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

// A trailerField is a field of a response's trailers.
type trailerField struct{ key, value string }

// trailerOutcome is what a client makes of a response's trailers: the
// trailers it keeps, and the class of the error its read of the body
// ends with instead of io.EOF.
type trailerOutcome struct {
	trailer http.Header
	class   string
}

func (o trailerOutcome) String() string {
	var kept []string
	for k, vv := range o.trailer {
		for _, v := range vv {
			kept = append(kept, k+":"+strconv.Itoa(len(v)))
		}
	}
	slices.Sort(kept)
	return fmt.Sprintf("trailers %v (key:length), error %q", kept, o.class)
}

// readTrailers is what tr's client makes of the trailers fields, set
// under http.TrailerPrefix by a handler, with MaxResponseHeaderBytes
// maxResponse.
func readTrailers(t *testing.T, tr transport, maxResponse int64, fields []trailerField) trailerOutcome {
	t.Helper()
	hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/x" {
			return
		}
		io.WriteString(w, "body")
		for _, f := range fields {
			w.Header().Add(http.TrailerPrefix+f.key, f.value)
		}
	}), headerLimits{response: maxResponse})
	warm(t, hc, base)
	resp, err := hc.Get(base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, err := drain(resp.Body)
	if body != "body" {
		t.Errorf("body %q, want all of it before the trailers", body)
	}
	o := trailerOutcome{class: errorClass(err)}
	for k, vv := range resp.Trailer {
		if len(vv) > 0 {
			if o.trailer == nil {
				o.trailer = make(http.Header)
			}
			o.trailer[k] = vv
		}
	}
	if err != nil && tr.name == "inproc" && !strings.Contains(err.Error(), "MaxResponseHeaderBytes") {
		t.Errorf("the error does not name the limit: %v", err)
	}
	return o
}

// printable is n bytes of printable ASCII but the space, from r: a value
// whose bytes take Huffman codes of many lengths.
func printable(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('!' + r.IntN('~'-'!'+1))
	}
	return string(b)
}

// hpackLen is how many bytes HPACK takes to send fields, none of which
// the encoder has sent before, as golang.org/x/net/http2/hpack, which
// net/http bundles, encodes them.
func hpackLen(fields []trailerField) int {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range fields {
		enc.WriteField(hpack.HeaderField{Name: strings.ToLower(f.key), Value: f.value})
	}
	return buf.Len()
}

// fillTo is fields and a field named key whose value makes the fields'
// HPACK block wire bytes long. Its value is of '&', which Huffman codes
// in 8 bits, so HPACK sends it as it is, a byte a byte.
func fillTo(t *testing.T, fields []trailerField, key string, wire int) []trailerField {
	t.Helper()
	n := wire - hpackLen(fields) - hpackLen([]trailerField{{key, ""}})
	for ; n > 0; n-- {
		filled := append(slices.Clip(fields), trailerField{key, strings.Repeat("&", n)})
		if got := hpackLen(filled); got == wire {
			return filled
		} else if got < wire {
			break
		}
	}
	t.Fatalf("no value of %s makes the block %d bytes", key, wire)
	return nil
}

// TestResponseTrailerLimit: net/http's HTTP/2 client reads a response's
// trailers through the framer that bounds a head, and with the same
// bound, counted as HTTP/2 counts it, the fields in the order the server
// sends them (by key). It keeps the fields up to the first that does not
// fit, drops that one and the rest, and reports no error. It fails the
// connection instead, and so the read of the body, on a name or value
// longer than the bound as sent (Huffman-coded where that is shorter),
// or as decoded where it decodes it (COMPRESSION_ERROR), and on a frame
// of the trailers' HPACK block longer than twice what is left of the
// bound, which any frame after the cut is (PROTOCOL_ERROR). The cases
// go in pairs: at an edge, and a byte past it.
func TestResponseTrailerLimit(t *testing.T) {
	const maxResponse = 4096
	const limit = maxResponse + 320
	// pad is a field named key that HTTP/2 counts as size bytes, its
	// value of 'p', 6 bits in Huffman code.
	pad := func(key string, size int) trailerField {
		return trailerField{key, strings.Repeat("p", size-fieldsSize(key, ""))}
	}
	// values are n fields X-T00, X-T01, ..., of n printable bytes
	// each.
	values := func(n, valueLen int) []trailerField {
		r := rand.New(rand.NewPCG(uint64(n), uint64(valueLen)))
		fields := make([]trailerField, n)
		for i := range fields {
			fields[i] = trailerField{fmt.Sprintf("X-T%02d", i), printable(r, valueLen)}
		}
		return fields
	}
	keys := func(fields []trailerField) []string {
		var kk []string
		for _, f := range fields {
			kk = append(kk, f.key)
		}
		return kk
	}
	cut := pad("X-A", limit+1) // a first field that does not fit
	for _, tc := range []struct {
		name        string
		maxResponse int64 // maxResponse if 0
		fields      func(t *testing.T) []trailerField
		kept        []string
		class       string
	}{
		{
			name:   "at",
			fields: func(*testing.T) []trailerField { return []trailerField{pad("X-A", limit-36), {"X-B", "1"}} },
			kept:   []string{"X-A", "X-B"},
		},
		{
			name:   "over",
			fields: func(*testing.T) []trailerField { return []trailerField{pad("X-A", limit-36+1), {"X-B", "1"}} },
			kept:   []string{"X-A"},
		},
		{
			// Sent by key: X-A comes first though set last.
			name:   "over-by-key",
			fields: func(*testing.T) []trailerField { return []trailerField{pad("X-C", limit-36+1), {"X-A", "1"}} },
			kept:   []string{"X-A"},
		},
		{
			name:   "all-dropped",
			fields: func(*testing.T) []trailerField { return []trailerField{cut, {"X-B", "1"}} },
		},
		{
			name: "value-at-bound",
			fields: func(*testing.T) []trailerField {
				return []trailerField{{"X-A", "1"}, {"X-B", strings.Repeat("p", limit)}}
			},
			kept: []string{"X-A"},
		},
		{
			name: "value-over-bound",
			fields: func(*testing.T) []trailerField {
				return []trailerField{{"X-A", "1"}, {"X-B", strings.Repeat("p", limit+1)}}
			},
			class: "connection error, COMPRESSION_ERROR",
		},
		{
			// After the cut a field too large for HPACK's table is
			// not decoded: its length as sent counts, and 'a' is
			// sent in 5 bits, 7065 of them in the bound's 4416 bytes.
			name:   "huffman-at-bound-after-cut",
			fields: func(*testing.T) []trailerField { return []trailerField{cut, {"X-B", strings.Repeat("a", limit*8/5)}} },
		},
		{
			name:   "huffman-over-bound-after-cut",
			fields: func(*testing.T) []trailerField { return []trailerField{cut, {"X-B", strings.Repeat("a", limit*8/5+1)}} },
			class:  "connection error, COMPRESSION_ERROR",
		},
		{
			// '{' takes 15 bits in Huffman code: sent as it is.
			name:   "raw-at-bound-after-cut",
			fields: func(*testing.T) []trailerField { return []trailerField{cut, {"X-B", strings.Repeat("{", limit)}} },
		},
		{
			name:   "raw-over-bound-after-cut",
			fields: func(*testing.T) []trailerField { return []trailerField{cut, {"X-B", strings.Repeat("{", limit+1)}} },
			class:  "connection error, COMPRESSION_ERROR",
		},
		{
			// A field small enough for HPACK's table is decoded
			// after the cut, to be added to it, and fails.
			name:        "decoded-over-bound-after-cut",
			maxResponse: 1000,
			fields: func(*testing.T) []trailerField {
				return []trailerField{pad("X-A", 1320+1), {"X-B", strings.Repeat("a", 2000)}}
			},
			class: "connection error, COMPRESSION_ERROR",
		},
		{
			// The first frame comes with all the bound left.
			name: "first-frame-at-twice-the-bound",
			fields: func(t *testing.T) []trailerField {
				return fillTo(t, values(5, 1000), "X-T05", 2*limit)
			},
			kept: []string{"X-T00", "X-T01", "X-T02", "X-T03"},
		},
		{
			name: "first-frame-over-twice-the-bound",
			fields: func(t *testing.T) []trailerField {
				return fillTo(t, values(5, 1000), "X-T05", 2*limit+1)
			},
			class: "connection error, PROTOCOL_ERROR",
		},
		{
			// X-T03 begins in the first frame and is cut in the
			// second, which comes with the bound less X-T00 to X-T02
			// left.
			name:        "second-frame-at-twice-what-is-left",
			maxResponse: 20000,
			fields: func(t *testing.T) []trailerField {
				return fillTo(t, values(3, 5000), "X-T03", 16384+2*(20320-3*fieldsSize("x-t00", strings.Repeat("v", 5000))))
			},
			kept: []string{"X-T00", "X-T01", "X-T02"},
		},
		{
			name:        "second-frame-over-twice-what-is-left",
			maxResponse: 20000,
			fields: func(t *testing.T) []trailerField {
				return fillTo(t, values(3, 5000), "X-T03", 16384+2*(20320-3*fieldsSize("x-t00", strings.Repeat("v", 5000)))+1)
			},
			class: "connection error, PROTOCOL_ERROR",
		},
		{
			// X-T07 is cut in the fourth frame: a block that ends
			// with it is cut, one a byte longer fails.
			name:        "no-frame-after-the-cut",
			maxResponse: 60000 - 320,
			fields:      func(t *testing.T) []trailerField { return fillTo(t, values(8, 8000), "X-T08", 4*16384) },
			kept:        keys(values(7, 8000)),
		},
		{
			name:        "a-frame-after-the-cut",
			maxResponse: 60000 - 320,
			fields:      func(t *testing.T) []trailerField { return fillTo(t, values(8, 8000), "X-T08", 4*16384+1) },
			class:       "connection error, PROTOCOL_ERROR",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maxResponse := cmp.Or(tc.maxResponse, maxResponse)
			fields := tc.fields(t)
			got := readTrailers(t, transports[0], maxResponse, fields)
			want := readTrailers(t, transports[1], maxResponse, fields)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("in-process %v\nnet/http   %v", got, want)
			}
			if kept := slices.Sorted(maps.Keys(want.trailer)); !slices.Equal(kept, tc.kept) || want.class != tc.class {
				t.Errorf("net/http's client kept %v with error %q; the case expects %v with %q", kept, want.class, tc.kept, tc.class)
			}
		})
	}
}
