package inprochttp

import (
	"fmt"
	"math"
	"net/http"
)

// HTTP/2 bounds a header list by the size HPACK gives it: each field's
// name and value and 32 bytes (RFC 9113, section 6.5.2). net/http's
// HTTP/2 server advertises its bound in SETTINGS_MAX_HEADER_LIST_SIZE,
// which its client obeys before it sends a request. It is counted here
// on the fields that would cross the wire, and checked where net/http's
// client checks it: before the request is sent.

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

// headerListSize is what HTTP/2 counts of a request header h's fields,
// one a value, and one a cookie-pair of the Cookie values, as net/http's
// client splits them.
func headerListSize(h http.Header) int64 {
	var n int64
	for k, vv := range h {
		if k == "Cookie" {
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

// requestTooLarge is why a request whose header list counts size bytes
// is not sent, over limit, the bound for maxHeaderBytes.
func requestTooLarge(size, limit int64, maxHeaderBytes int) error {
	return fmt.Errorf("inprochttp: request header list too large: %d bytes, as HTTP/2 counts them, over the server's limit of %d (MaxHeaderBytes %d and %d; http.DefaultMaxHeaderBytes for 0)",
		size, limit, maxHeaderBytes, http1Slack)
}
