package inprochttp

import (
	"fmt"
	"math"
	"net/http"
)

// HTTP/2 bounds a header list by the size HPACK gives it: each field's
// name and value and 32 bytes (RFC 9113, section 6.5.2). net/http's
// HTTP/2 server advertises its bound in SETTINGS_MAX_HEADER_LIST_SIZE,
// which its client obeys before it sends a request; its client bounds
// the response heads it reads by a bound of its own. Both are counted
// here on the fields that would cross the wire, and checked where
// net/http's client checks them: a request before it is sent, a
// response's head as it arrives.

// http1Slack is what net/http adds to a limit in HTTP/1 bytes to make it
// a header list size (http2adjustHTTP1MaxHeaderSize): HTTP/1 counts no
// 32 bytes a field, so 32 for each of 10 fields.
const http1Slack = 10 * 32

// fieldSize is what HTTP/2 counts of a field named name with a value of
// valueLen bytes. hpack's HeaderField.Size counts the same in a uint32,
// which a value of 4 GiB, possible in-process, would wrap to a small
// size that passes the check.
func fieldSize(name string, valueLen int) int64 {
	return int64(len(name)) + int64(valueLen) + 32
}

// headerListSize is what HTTP/2 counts of h's fields, one a value; in a
// request, one a cookie-pair of the Cookie values, as net/http's client
// splits them.
func headerListSize(h http.Header, request bool) int64 {
	var n int64
	for k, vv := range h {
		if request && k == "Cookie" {
			for c := range cookiePairs(vv) {
				n += fieldSize(k, len(c))
			}
			continue
		}
		for _, v := range vv {
			n += fieldSize(k, len(v))
		}
	}
	return n
}

// maxRequestHeaderList is the largest request header list net/http's
// HTTP/2 server takes with maxHeaderBytes as its MaxHeaderBytes: the
// SETTINGS_MAX_HEADER_LIST_SIZE it advertises.
func maxRequestHeaderList(maxHeaderBytes int) int64 {
	n := int64(maxHeaderBytes)
	if n <= 0 {
		n = http.DefaultMaxHeaderBytes
	}
	// A setting is 32 bits. net/http's conversion wraps past them,
	// which would make a huge limit tiny; the largest a setting can say
	// is taken instead.
	return min(n, math.MaxUint32-http1Slack) + http1Slack
}

// maxResponseHeaderList is the largest response head net/http's HTTP/2
// client takes with maxResponseHeaderBytes as its Transport's
// MaxResponseHeaderBytes (http2Transport.maxHeaderListSize).
func maxResponseHeaderList(maxResponseHeaderBytes int64) int64 {
	switch n := maxResponseHeaderBytes; {
	case n <= 0:
		return 10 << 20 // its default, with no slack added
	case n >= math.MaxUint32-http1Slack:
		// A sum no setting can say is no setting to it, and its framer
		// takes its own default.
		return 16 << 20
	default:
		return n + http1Slack
	}
}

// requestTooLarge is why a request whose header list, or trailers, as
// what says, count size bytes is not sent, or not ended, over limit, the
// bound for maxHeaderBytes.
func requestTooLarge(what string, size, limit int64, maxHeaderBytes int) error {
	return fmt.Errorf("inprochttp: %s too large: %d bytes, as HTTP/2 counts them, over the server's limit of %d (MaxHeaderBytes %d and %d; http.DefaultMaxHeaderBytes for 0)",
		what, size, limit, maxHeaderBytes, http1Slack)
}

// requestTrailersTooLarge is why net/http's client does not send the
// trailers of a request, at the end of its body: they count more than
// the server's limit (http2ClientConn.encodeTrailers). It counts each
// value of each key as a field, as net/http's client sends them,
// declared or not. net/http's server would keep the trailers that fit
// of a list over its limit, dropping the rest, but only a client that
// ignores the limit sends it one; in-process, the client always knows
// the limit.
func (t *transport) requestTrailersTooLarge(trailer http.Header) error {
	var size int64
	for k, vv := range trailer {
		for _, v := range vv {
			size += fieldSize(k, len(v))
		}
	}
	if size > t.maxRequestList {
		return requestTooLarge("request trailers", size, t.maxRequestList, t.maxHeaderBytes)
	}
	return nil
}

// maxInformationalList is the most net/http's HTTP/2 client takes of a
// response's 1xx heads together, with maxResponseHeaderBytes as its
// Transport's MaxResponseHeaderBytes, when no trace's Got1xxResponse
// sees them: the larger of its header list bound and
// MaxResponseHeaderBytes (http2clientConnReadLoop.handleResponse).
func maxInformationalList(maxResponseHeaderBytes int64) int64 {
	switch n := maxResponseHeaderBytes; {
	case n <= 0:
		return 10 << 20
	case n >= math.MaxUint32-http1Slack:
		// Its header list bound is no setting then, 0 to this
		// comparison, so MaxResponseHeaderBytes is the larger.
		return n
	default:
		return n + http1Slack
	}
}

// responseTooLarge is what the client gets of a response whose head, a
// 1xx head or the final one as what says, counts size bytes, over the
// client's limit: in the words of the stream error net/http's client
// gets then, so that what classifies those classifies this alike.
func (t *transport) responseTooLarge(what string, size int64) error {
	return fmt.Errorf("stream error: inprochttp: %s too large: %d bytes, as HTTP/2 counts them, over the client's limit of %d (MaxResponseHeaderBytes %d and %d; 10 MiB for 0); PROTOCOL_ERROR",
		what, size, t.maxResponseList, t.maxResponseHeaderBytes, http1Slack)
}

// informationalTooLarge is what the client gets of a response whose 1xx
// heads count size bytes together, over the bound for them when no
// trace sees them: a stream error, as for one head.
func (t *transport) informationalTooLarge(size int64) error {
	return fmt.Errorf("stream error: inprochttp: 1xx response heads too large: %d bytes together, as HTTP/2 counts them, with no trace's Got1xxResponse to see them, over the client's limit of %d for them (MaxResponseHeaderBytes %d and %d; 10 MiB for 0); PROTOCOL_ERROR",
		size, t.maxInformationalList, t.maxResponseHeaderBytes, http1Slack)
}
