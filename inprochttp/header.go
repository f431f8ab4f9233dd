package inprochttp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Headers cross as HTTP/2 carries them: a peer reads every key canonical
// (HTTP/2 sends them in lower case), never sees a key without a value, nor
// a field with a name or value HTTP could not carry. Of the
// connection-specific fields RFC 9113 forbids, a peer sees those
// net/http sends: none in a request; all but Connection in a final
// response head, and Transfer-Encoding only as "trailers"; all in a 1xx
// head, but Transfer-Encoding. Keys that differ only in case are one
// field to a peer, with their values in the order of the sorted keys, in
// which net/http's server sends them. A copy is made either way, so that
// neither side sees the other change its map.
//
// net/http's client matches the keys it reads for itself in any case;
// its server reads only the canonical ones (Connection, Content-Length,
// Content-Type, Content-Encoding, Trailer, and those a 1xx head leaves
// out), and sends a key in another case as any other field, lower-cased:
// the client merges its values with the canonical key's.

// A headKind is whose head a header is, which decides what of it crosses.
type headKind uint8

const (
	// requestHead is a client's: net/http's client refuses a field it
	// cannot carry, and leaves out the connection-specific ones.
	requestHead headKind = iota
	// responseHead is a handler's final head: net/http's server leaves
	// out a field it cannot carry, Connection, and a Transfer-Encoding
	// but "trailers".
	responseHead
	// informationalHead is a handler's 1xx head: net/http's server
	// leaves out a field it cannot carry, the final response's
	// Content-Length, and Transfer-Encoding.
	informationalHead
)

// leftOut reports whether net/http leaves out of a head of kind the
// field of the handler's key k, whose canonical form is key, with values
// vv, all of them. Its client leaves out a connection-specific field
// whatever the case of its key; its server reads only the canonical key:
// it leaves out Connection, and a Content-Length whose first value is not
// empty, which it sends itself, after the other fields (see
// writeHeaderLocked); of a 1xx head, Content-Length and
// Transfer-Encoding.
func (kind headKind) leftOut(k, key string, vv []string) bool {
	switch kind {
	case requestHead:
		return connectionSpecific(key)
	case responseHead:
		return k == "Connection" || k == "Content-Length" && len(vv) > 0 && vv[0] != ""
	}
	return k == "Content-Length" || k == "Transfer-Encoding"
}

// cloneHeader returns h as a peer reads it, a head of kind, with room for
// extra more keys, and extra spare values for them (see setOne). A field
// that HTTP cannot carry is an error in a request, which net/http's
// Transport refuses, and left out of a response, as net/http's server
// leaves it out.
func cloneHeader(h http.Header, extra int, kind headKind) (http.Header, []string, error) {
	n := 0
	for _, vv := range h {
		n += len(vv)
	}
	values := make([]string, n+extra) // one array for all the values, as http.Header.Clone
	spare := values[n:]
	out := make(http.Header, len(h)+extra)
	var variants []string // keys that several of h's have, differing in case
	for k, vv := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			if kind == requestHead {
				return nil, nil, fmt.Errorf("inprochttp: invalid header field name %q", k)
			}
			continue
		}
		key := http.CanonicalHeaderKey(k)
		if kind.leftOut(k, key, vv) {
			continue
		}
		kept := values[:0:len(vv)]
		for _, v := range vv {
			if !kind.keeps(key, v) {
				if kind == requestHead {
					return nil, nil, fmt.Errorf("inprochttp: invalid header field value for %q", k)
				}
				continue
			}
			kept = append(kept, v)
		}
		values = values[len(vv):]
		if len(kept) == 0 {
			continue
		}
		if _, ok := out[key]; ok {
			variants = append(variants, key)
			continue
		}
		out[key] = kept
	}
	for _, key := range variants {
		out[key] = caseVariants(h, key, kind)
	}
	return out, spare, nil
}

// keeps reports whether a peer reads the value v of the canonical key in
// a head of kind: HTTP can carry it, and net/http's server sends no
// Transfer-Encoding but "trailers", whatever the case of its key.
func (kind headKind) keeps(key, v string) bool {
	return httpguts.ValidHeaderFieldValue(v) && (kind == requestHead || key != "Transfer-Encoding" || v == "trailers")
}

// caseVariants is what a peer reads of the values of h's keys whose
// canonical form is key, in a head of kind: net/http's server sends a
// field for each key, in the order of the sorted keys, and the peer
// appends their values in the order they come. (Its client sends a
// request's in the map's order, which is any; this is one.)
func caseVariants(h http.Header, key string, kind headKind) []string {
	var keys []string
	for k, vv := range h {
		if httpguts.ValidHeaderFieldName(k) && http.CanonicalHeaderKey(k) == key && !kind.leftOut(k, key, vv) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var vv []string
	for _, k := range keys {
		for _, v := range h[k] {
			if kind.keeps(key, v) {
				vv = append(vv, v)
			}
		}
	}
	return vv
}

// setOne sets h's key to the single value v, in the first of the spare
// values if there is one left, which it takes.
func setOne(h http.Header, key, v string, spare *[]string) {
	s := *spare
	if len(s) == 0 {
		h[key] = []string{v}
		return
	}
	s[0] = v
	h[key] = s[:1:1]
	*spare = s[1:]
}

// addOne adds v to h's key's values: in the first of the spare values if
// the key has none, as setOne; else after them, in a copy.
func addOne(h http.Header, key, v string, spare *[]string) {
	vv := h[key]
	if len(vv) == 0 {
		setOne(h, key, v, spare)
		return
	}
	h[key] = append(vv[:len(vv):len(vv)], v)
}

// connectionSpecific reports whether the canonical key names a field
// HTTP/2 does not carry (RFC 9113, section 8.2.2).
func connectionSpecific(key string) bool {
	switch key {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// declaredTrailers returns the canonical keys the values of a "Trailer"
// field declare, comma-separated: those the client's Response.Trailer
// lists, whether or not they may be trailers.
func declaredTrailers(values []string) []string {
	var keys []string
	for _, v := range values {
		for k := range strings.SplitSeq(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, http.CanonicalHeaderKey(k))
			}
		}
	}
	return keys
}

// trailers returns the trailers of a response whose handler has returned
// with header h: the declared keys' values, then those set under
// http.TrailerPrefix, which replace a declared key's, as net/http's HTTP/2
// server sends them. A key set under http.TrailerPrefix that may not be
// a trailer is logged, as net/http's server logs it; a declared one was
// logged as the head went (see logInvalidTrailers). The handler no
// longer touches h, so its values are not copied.
func (t *transport) trailers(h http.Header, declared []string) http.Header {
	var out http.Header
	set := func(k string, vv []string) {
		kept := vv
		for i, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) { // rare: copy the others
				kept = append(vv[:i:i], vv[i+1:]...)
				kept = slices.DeleteFunc(kept, func(v string) bool { return !httpguts.ValidHeaderFieldValue(v) })
				break
			}
		}
		if len(kept) == 0 {
			return
		}
		if out == nil {
			out = make(http.Header)
		}
		out[k] = kept
	}
	for _, k := range declared {
		if httpguts.ValidHeaderFieldName(k) && httpguts.ValidTrailerHeader(k) {
			set(k, h[k])
		}
	}
	for k, vv := range h {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			switch name = http.CanonicalHeaderKey(name); {
			case !httpguts.ValidTrailerHeader(name):
				t.logInvalidTrailer(name)
			case httpguts.ValidHeaderFieldName(name):
				set(name, vv)
			}
		}
	}
	return out
}

// logInvalidTrailers logs each of the declared keys that may not be a
// trailer, as net/http's server logs them when it sends the head that
// declares them.
func (t *transport) logInvalidTrailers(declared []string) {
	for _, k := range declared {
		if !httpguts.ValidTrailerHeader(k) {
			t.logInvalidTrailer(k)
		}
	}
}

// logInvalidTrailer logs that the trailer key, which may not be one
// (RFC 9110, section 6.5.1), is not sent, in net/http's words.
func (t *transport) logInvalidTrailer(key string) {
	t.logf("inprochttp: ignoring invalid trailer %q", key)
}
