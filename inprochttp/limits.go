package inprochttp

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
)

// HTTP/2 bounds a header list by the size HPACK gives it: each field's
// name and value and 32 bytes (RFC 9113, section 6.5.2). net/http's
// HTTP/2 server advertises its bound in SETTINGS_MAX_HEADER_LIST_SIZE,
// which its client obeys before it sends a request or its trailers; its
// client bounds the response heads, 1xx or final, and trailers it reads
// by a bound of its own. Both are counted here on the fields that would
// cross the wire, and checked where net/http's client checks them: a
// request before it is sent, its trailers at the end of its body, a
// response's heads as they arrive, its trailers at the end of its body.

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
// client's limit: the stream error (PROTOCOL_ERROR) net/http's client
// gets then.
func (t *transport) responseTooLarge(what string, size int64) error {
	return newStreamError(errCodeProtocol, fmt.Sprintf("%s too large: %d bytes, as HTTP/2 counts them, over the client's limit of %d (MaxResponseHeaderBytes %d and %d; 10 MiB for 0)",
		what, size, t.maxResponseList, t.maxResponseHeaderBytes, http1Slack), nil)
}

// informationalTooLarge is what the client gets of a response whose 1xx
// heads count size bytes together, over the bound for them when no
// trace sees them: a stream error, as for one head.
func (t *transport) informationalTooLarge(size int64) error {
	return newStreamError(errCodeProtocol, fmt.Sprintf("1xx response heads too large: %d bytes together, as HTTP/2 counts them, with no trace's Got1xxResponse to see them, over the client's limit of %d for them (MaxResponseHeaderBytes %d and %d; 10 MiB for 0)",
		size, t.maxInformationalList, t.maxResponseHeaderBytes, http1Slack), nil)
}

// A response's head, 1xx or final, and its trailers each cross in an
// HPACK block of their own, which net/http's server sends in frames of
// 16 KiB (http2splitHeaderBlock) and net/http's client reads through its
// framer, with one bound (http2Framer.readMetaFrame). The framer emits
// the fields in the order they came until one does not fit in what is
// left of the bound; from there on it emits none and marks the list cut.
// For a head, the client's handleResponse fails the stream on the mark
// (PROTOCOL_ERROR). For trailers, its processTrailers does not look at
// the mark: the fields that fit are the trailers, and no error is
// reported. The framer fails the connection instead of cutting in two
// cases: a name or value longer than the bound (hpack's string limit,
// COMPRESSION_ERROR), and a frame of the block longer than twice what
// is left of the bound as the frame comes, which any frame after the cut
// is (PROTOCOL_ERROR). Which of cutting and failing it does hangs on the
// bytes HPACK sends, reckoned here as for fields the server has not sent
// before (see hpackFieldLen): a field it sent before, on the same
// connection or earlier in the block, or one whose name or value is in
// HPACK's static table (:status above all), costs it fewer, so within a
// few bytes of an edge the two may disagree.

// hpackFrameSize is the most of an HPACK block net/http's server sends in
// one frame; the rest goes in CONTINUATION frames.
const hpackFrameSize = 16 << 10

// hpackIndexedMax is the largest field, as HTTP/2 counts it, that
// net/http's server adds to HPACK's dynamic table (hpack's Encoder
// shouldIndex, its table being 4096 bytes). net/http's client decodes the
// strings of such a field even after the cut, to add it to its table, so
// it fails on one longer than the bound there.
const hpackIndexedMax = 4096

// An hfield is a header field of a block, by its canonical name.
type hfield struct{ name, value string }

// blockFields is the fields of a header block as net/http's server
// encodes them: first, then h's keys in order, but those of last, each
// key's values in order, then the keys of last, which it sends after
// the others.
func blockFields(first []hfield, h http.Header, last ...string) []hfield {
	fields := first
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if !slices.Contains(last, k) {
			for _, v := range h[k] {
				fields = append(fields, hfield{k, v})
			}
		}
	}
	for _, k := range last {
		for _, v := range h[k] {
			fields = append(fields, hfield{k, v})
		}
	}
	return fields
}

// A blockFailure is why net/http's client fails its connection on a
// header block: what of the block, and the connection error's code.
type blockFailure struct {
	what string
	code errCode
}

var (
	frameTooLong  = &blockFailure{"a frame of its HPACK block more than twice what is left of", errCodeProtocol}
	stringTooLong = &blockFailure{"a name or value longer than", errCodeCompression}
)

// readBlock is how net/http's HTTP/2 client reads a header block of
// fields, in the order net/http's server sends them, with limit as its
// bound: it emits the first kept fields and cuts the rest, if any; or it
// fails its connection for fail. A block that HTTP/2 counts within the
// bound is emitted whole: no field takes more bytes on the wire than
// HTTP/2 counts of it, so no string is longer than the bound and no
// frame longer than twice what is left.
func readBlock(fields []hfield, limit int64) (kept int, fail *blockFailure) {
	type wireField struct {
		size              int64
		wire              int // bytes on the wire
		nameLen, valueLen int // bytes of each string on the wire, but its length
	}
	wires := make([]wireField, len(fields))
	total := 0
	for i, f := range fields {
		wire, nameLen, valueLen := hpackFieldLen(f.name, f.value)
		wires[i] = wireField{fieldSize(f.name, len(f.value)), wire, nameLen, valueLen}
		total += wire
	}
	remain, cut := limit, false
	// next is where the next frame starts: the framer checks its
	// length as it comes, once every field that ends before it is
	// decoded.
	next := 0
	frameFits := func() bool {
		// net/http doubles its 32-bit remainder in 32 bits, which
		// wraps for a bound of 2 GiB or more and fails any frame
		// longer than the wrapped double; this takes the double, as
		// it means to.
		if n := min(hpackFrameSize, total-next); int64(n) > 2*remain {
			return false
		}
		next += hpackFrameSize
		return true
	}
	pos := 0
	for i, f := range fields {
		w := wires[i]
		end := pos + w.wire
		for next <= pos {
			if !frameFits() {
				return 0, frameTooLong
			}
		}
		// hpack refuses a string longer than the bound as it reads
		// the length it is sent with.
		if int64(max(w.nameLen, w.valueLen)) > limit {
			return 0, stringTooLong
		}
		for next < end {
			if !frameFits() {
				return 0, frameTooLong
			}
		}
		// It also refuses one that decodes to more, where it decodes
		// it: to emit the field, or to add it to its table.
		if (!cut || w.size <= hpackIndexedMax) && int64(max(len(f.name), len(f.value))) > limit {
			return 0, stringTooLong
		}
		if !cut {
			if w.size > remain {
				cut, remain = true, 0
			} else {
				remain -= w.size
				kept++
			}
		}
		pos = end
	}
	return kept, nil
}

// headTooLarge is what the client gets of a response head of status and
// header h, a 1xx head or the final one as what says, which counts size
// bytes, over the client's limit: the stream error net/http's client
// gets then, or the connection error its framer fails the connection
// with instead. last are the keys of h net/http's server sends after the
// others.
func (t *transport) headTooLarge(what string, status int, h http.Header, size int64, last ...string) error {
	fields := blockFields([]hfield{{":status", strconv.Itoa(status)}}, h, last...)
	if _, fail := readBlock(fields, t.maxResponseList); fail != nil {
		return t.blockTooLarge(what, size, fail)
	}
	return t.responseTooLarge(what, size)
}

// cutTrailers returns what net/http's HTTP/2 client keeps of a response's
// trailers trailer, as net/http's server sends them, or the connection
// error it fails the read of the body with instead.
func (t *transport) cutTrailers(trailer http.Header) (http.Header, error) {
	size := headerListSize(trailer, false)
	if size <= t.maxResponseList {
		return trailer, nil
	}
	// net/http's server sends them by key (promoteUndeclaredTrailers
	// sorts them), each key's values in order.
	fields := blockFields(nil, trailer)
	kept, fail := readBlock(fields, t.maxResponseList)
	if fail != nil {
		return nil, t.blockTooLarge("response trailers", size, fail)
	}
	out := make(http.Header)
	for _, f := range fields[:kept] {
		out[f.name] = append(out[f.name], f.value)
	}
	return out, nil
}

// blockTooLarge is the connection error net/http's client fails its
// connection with, for fail, on a header block (what: a head or the
// trailers) that counts size bytes.
func (t *transport) blockTooLarge(what string, size int64, fail *blockFailure) error {
	return &connError{fail.code, fmt.Sprintf("%s too large: %d bytes, as HTTP/2 counts them, with %s the client's limit of %d (MaxResponseHeaderBytes %d and %d; 10 MiB for 0)",
		what, size, fail.what, t.maxResponseList, t.maxResponseHeaderBytes, http1Slack)}
}
