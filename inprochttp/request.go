package inprochttp

import (
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// A request crosses as HTTP/2 carries it: net/http's client checks it and
// encodes its head (golang.org/x/net/internal/httpcommon's EncodeHeaders,
// which net/http bundles), and its server builds the handler's request from
// what arrives (NewServerRequest and http2serverConn.newWriterAndRequest).
// Doing both here, without the wire between, keeps what a handler sees what
// it would see over a socket: the URL parsed from :path, one Cookie field,
// no Expect, a punycode Host, and so on.

// An arrival is what the server notes of a request besides the handler's
// http.Request.
type arrival struct {
	// needsContinue: the client sent "Expect: 100-continue", so the
	// handler's first read of the body sends 100 Continue.
	needsContinue bool
	// refused, if not nil, is why net/http's server answers 400 Bad
	// Request in place of the handler.
	refused error
}

// serverRequest fills sreq with the request the handler gets for the
// client's req, but for its context and body, which the exchange gives it
// (Body is nil);
// or says why req cannot be sent, in the words of net/http's Transport:
// its header list over maxList, the server's limit, among the reasons.
func serverRequest(req, sreq *http.Request, maxList int64, maxHeaderBytes int) (arrival, error) {
	u := req.URL
	switch {
	case u == nil:
		return arrival{}, errors.New("inprochttp: nil Request.URL")
	case req.Header == nil:
		return arrival{}, errors.New("inprochttp: nil Request.Header")
	case u.Scheme != "http" && u.Scheme != "https":
		return arrival{}, fmt.Errorf("inprochttp: unsupported protocol scheme %q: the URL must be http or https", u.Scheme)
	case u.Host == "":
		return arrival{}, errors.New("inprochttp: no Host in request URL")
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	} else if !httpguts.ValidHeaderFieldName(method) {
		return arrival{}, fmt.Errorf("inprochttp: invalid method %q", method)
	}
	if err := checkConnHeaders(req.Header); err != nil {
		return arrival{}, err
	}
	host, err := requestHost(req)
	if err != nil {
		return arrival{}, err
	}
	// A CONNECT (not the extended one, which this does not carry) names
	// its target in :authority alone, and the server's URL is that host.
	target, requestURI := &url.URL{Host: host}, host
	size := fieldSize(":authority", len(host)) + fieldSize(":method", len(method))
	if method != http.MethodConnect {
		path, err := pseudoPath(u, host)
		if err != nil {
			return arrival{}, err
		}
		if target, err = url.ParseRequestURI(path); err != nil {
			// net/http's server resets the stream.
			return arrival{}, fmt.Errorf("inprochttp: stream error: the server cannot parse :path %q; PROTOCOL_ERROR", path)
		}
		requestURI = path
		size += fieldSize(":path", len(path)) + fieldSize(":scheme", len(u.Scheme))
	}
	trailer, err := requestTrailer(req)
	if err != nil {
		return arrival{}, err
	}
	if len(req.Trailer) > 0 {
		// The client names them in a "trailer" field, comma-separated.
		n := len(req.Trailer) - 1
		for k := range req.Trailer {
			n += len(k)
		}
		size += fieldSize("trailer", n)
	}
	header, arrived, headerSize, err := requestHeader(req, method)
	if err != nil {
		return arrival{}, err
	}
	if size += headerSize; size > maxList {
		return arrival{}, requestTooLarge("request header list", size, maxList, maxHeaderBytes)
	}
	// The "Trailer" field the client sends declares req.Trailer's keys,
	// and the server takes it out of the header.
	if declared, ok := header["Trailer"]; ok {
		delete(header, "Trailer")
		trailer = declareTrailers(trailer, declared)
	}
	*sreq = http.Request{
		Method:        method,
		URL:           target,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		ContentLength: contentLength(req),
		Host:          host,
		RemoteAddr:    inprocAddrName,
		RequestURI:    requestURI,
		Trailer:       trailer,
	}
	return arrived, nil
}

// requestHost is the :authority net/http's client sends for req: its Host
// or its URL's, in punycode, refused if it is no valid Host.
func requestHost(req *http.Request) (string, error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	// The error names the Host the client gave, not the empty string
	// that comes back with it.
	ascii, err := httpguts.PunycodeHostPort(host)
	if err != nil {
		return "", fmt.Errorf("inprochttp: invalid Host %q: %w", host, err)
	}
	if !httpguts.ValidHostHeader(ascii) {
		return "", errors.New("inprochttp: invalid Host header")
	}
	return ascii, nil
}

// pseudoPath is the :path net/http's client sends for u: its RequestURI,
// without the scheme and host an Opaque "//host/path" brings.
func pseudoPath(u *url.URL, host string) (string, error) {
	path := u.RequestURI()
	if validPseudoPath(path) {
		return path, nil
	}
	if p := strings.TrimPrefix(path, u.Scheme+"://"+host); validPseudoPath(p) {
		return p, nil
	}
	if u.Opaque != "" {
		return "", fmt.Errorf("inprochttp: invalid request :path %q from URL.Opaque = %q", path, u.Opaque)
	}
	return "", fmt.Errorf("inprochttp: invalid request :path %q", path)
}

// validPseudoPath reports whether v may be a :path: absolute, or "*".
func validPseudoPath(v string) bool {
	return (len(v) > 0 && v[0] == '/') || v == "*"
}

// checkConnHeaders refuses the connection-specific fields of h that
// net/http's HTTP/2 client refuses rather than leaves out: it leaves out
// "Transfer-Encoding: chunked" and "Connection: close" or "keep-alive",
// which mean nothing in HTTP/2, and refuses an upgrade or another coding.
func checkConnHeaders(h http.Header) error {
	if vv := h["Upgrade"]; len(vv) > 0 && vv[0] != "" && vv[0] != "chunked" {
		return fmt.Errorf("inprochttp: invalid Upgrade request header: %q", vv)
	}
	if vv := h["Transfer-Encoding"]; len(vv) > 0 && (len(vv) > 1 || vv[0] != "" && vv[0] != "chunked") {
		return fmt.Errorf("inprochttp: invalid Transfer-Encoding request header: %q", vv)
	}
	if vv := h["Connection"]; len(vv) > 0 && (len(vv) > 1 || vv[0] != "" && !asciiEqualFold(vv[0], "close") && !asciiEqualFold(vv[0], "keep-alive")) {
		return fmt.Errorf("inprochttp: invalid Connection request header: %q", vv)
	}
	return nil
}

// requestTrailer is the server's Request.Trailer for the trailers req
// declares: its keys, without values until the body's end; or why
// net/http's client refuses them.
func requestTrailer(req *http.Request) (http.Header, error) {
	if len(req.Trailer) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(req.Trailer))
	for k, vv := range req.Trailer {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("inprochttp: invalid HTTP trailer name %q", k)
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("inprochttp: invalid HTTP trailer value for header %q", k)
			}
		}
		k = http.CanonicalHeaderKey(k)
		switch k {
		case "Transfer-Encoding", "Trailer", "Content-Length":
			return nil, fmt.Errorf("inprochttp: invalid Trailer key %q", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return declareTrailers(nil, keys), nil
}

// declareTrailers adds to trailer the keys the values of a "Trailer" field
// list, as net/http's server does: those a body's framing needs are left
// out.
func declareTrailers(trailer http.Header, values []string) http.Header {
	for _, v := range values {
		for k := range strings.SplitSeq(v, ",") {
			switch k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k {
			case "Transfer-Encoding", "Trailer", "Content-Length":
			default:
				if trailer == nil {
					trailer = make(http.Header)
				}
				trailer[k] = nil
			}
		}
	}
	return trailer
}

// hasBody reports whether req has a body to send.
func hasBody(req *http.Request) bool {
	return req.Body != nil && req.Body != http.NoBody
}

// contentLength is the length of req's body: 0 if it has none, -1 if
// unknown (a client's 0 with a body means unknown, and so does any
// negative length, which net/http's client sends no Content-Length for).
func contentLength(req *http.Request) int64 {
	switch {
	case !hasBody(req):
		return 0
	case req.ContentLength <= 0:
		return -1
	}
	return req.ContentLength
}

// requestHeader is req's header as the handler gets it, and what the
// server notes of it: canonical keys; Host and the connection-specific
// fields left out; Content-Length and User-Agent as net/http's HTTP/2
// client sends them; cookies as its client splits and its server joins
// them; "Expect: 100-continue" taken by the server. A field a client could
// not send is an error. size is what HTTP/2 counts of the fields the
// client sends.
func requestHeader(req *http.Request, method string) (h http.Header, arrived arrival, size int64, err error) {
	h, spare, err := cloneHeader(req.Header, 2, requestHead)
	if err != nil {
		return nil, arrived, 0, err
	}
	delete(h, "Host")
	// Content-Length is the body's, whatever the header says; a known
	// length is sent, and 0 for the methods that take a body.
	delete(h, "Content-Length")
	switch cl := contentLength(req); {
	case cl > 0:
		setOne(h, "Content-Length", strconv.FormatInt(cl, 10), &spare)
	case cl == 0 && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch):
		setOne(h, "Content-Length", "0", &spare)
	}
	// At most one User-Agent, none if it is empty or named without a
	// value, net/http's if it is not named.
	switch ua, ok := h["User-Agent"]; {
	case ok && ua[0] == "":
		delete(h, "User-Agent")
	case ok:
		h["User-Agent"] = ua[:1:1]
	case !mentions(req.Header, "User-Agent"):
		setOne(h, "User-Agent", defaultUserAgent, &spare)
	}
	// What the client sends, before the server joins and takes fields.
	size = headerListSize(h, true)
	if vv, ok := h["Cookie"]; ok {
		if joined := joinCookies(vv); joined == nil {
			delete(h, "Cookie")
		} else {
			h["Cookie"] = joined
		}
	}
	if vv, ok := h["Expect"]; ok && httpguts.HeaderValuesContainsToken(vv, "100-continue") {
		delete(h, "Expect")
		arrived.needsContinue = true
	}
	if !validTE(h["Te"]) {
		arrived.refused = errors.New(`request header "TE" may only be "trailers" in HTTP/2`)
	}
	return h, arrived, size, nil
}

// validTE reports whether HTTP/2 takes a request with the TE values te:
// none, or one, "trailers" or empty (RFC 9113, section 8.2.2).
func validTE(te []string) bool {
	return len(te) == 0 || len(te) == 1 && (te[0] == "trailers" || te[0] == "")
}

// defaultUserAgent is net/http's, which its HTTP/2 client sends when the
// request names none.
const defaultUserAgent = "Go-http-client/2.0"

// mentions reports whether h has key, in any case.
func mentions(h http.Header, key string) bool {
	if _, ok := h[key]; ok {
		return true
	}
	for k := range h {
		if asciiEqualFold(k, key) {
			return true
		}
	}
	return false
}

// joinCookies returns the Cookie values vv as the server reads them: the
// client sends each cookie-pair as a field of its own (RFC 9113, section
// 8.2.3), and the server joins them with "; ". nil if there are none.
func joinCookies(vv []string) []string {
	// One pair, sent as it is; an empty value is no pair, and sends
	// no field.
	if len(vv) == 1 && vv[0] != "" && !strings.Contains(vv[0], ";") {
		return vv
	}
	var crumbs []string
	for c := range cookiePairs(vv) {
		crumbs = append(crumbs, c)
	}
	if len(crumbs) <= 1 {
		return crumbs
	}
	return []string{strings.Join(crumbs, "; ")}
}

// cookiePairs yields the cookie-pairs of the Cookie values vv as
// net/http's HTTP/2 client sends them, each in a field of its own: split
// at each ";", the spaces after it dropped, an empty last one left out.
func cookiePairs(vv []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, v := range vv {
			for {
				p := strings.IndexByte(v, ';')
				if p < 0 {
					break
				}
				if !yield(v[:p]) {
					return
				}
				for p++; p < len(v) && v[p] == ' '; p++ {
				}
				v = v[p:]
			}
			if v != "" && !yield(v) {
				return
			}
		}
	}
}

// asciiEqualFold is strings.EqualFold in ASCII alone, as HTTP compares
// names and tokens: "ſ" is no "s" there. It is net/http's
// internal/ascii.EqualFold, which httpguts does not export.
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) != lowerASCII(t[i]) {
			return false
		}
	}
	return true
}

// lowerASCII is b in lower case, if it is an ASCII letter.
func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
