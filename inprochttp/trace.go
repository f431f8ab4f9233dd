package inprochttp

import (
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
)

// A client's [httptrace.ClientTrace] sees what net/http's HTTP/2 client
// shows it, at the equivalent points of the exchange:
//
//   - WroteHeaderField, for each field of the request's head, as that
//     client writes it (golang.org/x/net/internal/httpcommon's
//     EncodeHeaders): the pseudo-header fields, the declared trailers'
//     names, the header's other fields in the map's order with names in
//     lower case, then Content-Length and the default User-Agent; then
//     WroteHeaders. Both before RoundTrip starts the handler.
//   - WroteRequest, once the whole request is written: at once if it has
//     no body, else when the handler has read its end and the trailers
//     have passed; or with why it was not, once the exchange is done
//     with the body before its end.
//   - GotFirstResponseByte, as the first head, a 1xx one included,
//     reaches the client, unless the client fails its connection on it.
//   - Got1xxResponse and Got100Continue, for each 1xx head.
//
// None of the connection's hooks is called: there is none. Nor is
// Wait100Continue: the client does not wait for 100 Continue, as
// net/http's does not unless its ExpectContinueTimeout is set.
//
// Whether a request has a trace is decided once, as it starts; the trace
// is looked up again only for a request that has one.

// trace is the client's trace, or nil.
func (ex *exchange) trace() *httptrace.ClientTrace {
	if !ex.traced {
		return nil
	}
	return httptrace.ContextClientTrace(ex.creq.Context())
}

// traceRequestHead tells trace of the head net/http's HTTP/2 client
// writes for req, which arrives as sreq: each field as it writes it, in
// its order, then that the head is written. A request without a body is
// written whole with it.
func (ex *exchange) traceRequestHead(trace *httptrace.ClientTrace, req, sreq *http.Request) {
	if f := trace.WroteHeaderField; f != nil {
		field := func(name, value string) { f(name, []string{value}) }
		field(":authority", sreq.Host)
		field(":method", sreq.Method)
		if sreq.Method != http.MethodConnect {
			field(":path", sreq.RequestURI)
			field(":scheme", req.URL.Scheme)
		}
		if len(req.Trailer) > 0 {
			keys := make([]string, 0, len(req.Trailer))
			for k := range req.Trailer {
				keys = append(keys, http.CanonicalHeaderKey(k))
			}
			slices.Sort(keys)
			field("trailer", strings.Join(keys, ","))
		}
		didUA := false
		for k, vv := range req.Header {
			switch {
			case asciiEqualFold(k, "Host"), asciiEqualFold(k, "Content-Length"), sentByNone(k):
				continue
			case asciiEqualFold(k, "User-Agent"):
				didUA = true
				if len(vv) == 0 || vv[0] == "" {
					continue
				}
				vv = vv[:1]
			case asciiEqualFold(k, "Cookie"):
				for c := range cookiePairs(vv) {
					field("cookie", c)
				}
				continue
			}
			name := strings.ToLower(k)
			for _, v := range vv {
				field(name, v)
			}
		}
		if cl := contentLength(req); cl > 0 || cl == 0 && (sreq.Method == http.MethodPost || sreq.Method == http.MethodPut || sreq.Method == http.MethodPatch) {
			field("content-length", strconv.FormatInt(cl, 10))
		}
		if !didUA {
			field("user-agent", defaultUserAgent)
		}
	}
	if trace.WroteHeaders != nil {
		trace.WroteHeaders()
	}
	if !hasBody(req) {
		ex.wroteRequest(nil)
	}
}

// sentByNone reports whether the header key, in any case, names a
// connection-specific field, which HTTP/2 does not carry.
func sentByNone(key string) bool {
	for _, name := range [...]string{"Connection", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Keep-Alive"} {
		if asciiEqualFold(key, name) {
			return true
		}
	}
	return false
}

// wroteRequest tells the client's trace, once, that its request is
// written, or why it is not: err.
func (ex *exchange) wroteRequest(err error) {
	if !ex.traced {
		return
	}
	ex.mu.Lock()
	done := ex.wrote
	ex.wrote = true
	ex.mu.Unlock()
	if trace := ex.trace(); !done && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	}
}

// firstByteLocked reports whether the head about to reach the client,
// which fails its connection on it if headErr is a connection error, is
// the first the client's trace is to be told of, and notes that it is
// told.
func (ex *exchange) firstByteLocked(headErr error) bool {
	if !ex.traced || ex.firstByte {
		return false
	}
	if _, conn := headErr.(*connError); conn {
		return false
	}
	ex.firstByte = true
	return true
}

// traceFirstByte tells the client's trace that the response's first
// byte has come.
func (ex *exchange) traceFirstByte() {
	if trace := ex.trace(); trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
}
