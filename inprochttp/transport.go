package inprochttp

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strconv"
)

// NewTransport returns an [http.RoundTripper] that serves every request by
// calling h.ServeHTTP in this process, with the semantics of net/http's
// HTTP/2 server (see the package documentation). Any URL with the scheme
// http or https and a host reaches h; the host is only a name, which the
// handler sees as the request's Host.
//
// NewTransport panics if h is nil, as [http.Handle] does; nil options are
// ignored.
func NewTransport(h http.Handler, opts ...Option) http.RoundTripper {
	if h == nil {
		panic("inprochttp: NewTransport: nil handler")
	}
	t := &transport{handler: h}
	for _, o := range opts {
		if o != nil {
			o.apply(t)
		}
	}
	return t
}

// transport is the RoundTripper NewTransport returns.
type transport struct {
	handler  http.Handler
	errorLog *log.Logger // nil: the log package's standard logger
}

// RoundTrip starts the handler on req and returns the response once its
// head is ready, or the reason there is none: req is malformed, req's
// context ended, or the handler panicked before its response began.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req == nil {
		return nil, errors.New("inprochttp: nil Request")
	}
	ex, err := newExchange(t, req)
	if err != nil {
		// A RoundTripper closes the body, even on errors.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	go ex.serve()
	return ex.response()
}

// serverRequest fills sreq with the request the handler gets for the
// client's req, as net/http's HTTP/2 server would read it, with target as
// its URL, but for its context and body, which the exchange gives it; or
// says why req cannot be sent, in the words of net/http's Transport.
func serverRequest(req, sreq *http.Request, target *url.URL) error {
	u := req.URL
	switch {
	case u == nil:
		return errors.New("inprochttp: nil Request.URL")
	case req.Header == nil:
		return errors.New("inprochttp: nil Request.Header")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("inprochttp: unsupported protocol scheme %q: the URL must be http or https", u.Scheme)
	case u.Host == "" && req.Host == "":
		return errors.New("inprochttp: no Host in request URL")
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	} else if !isToken(method) {
		return fmt.Errorf("inprochttp: invalid method %q", method)
	}
	header, err := requestHeader(req, method)
	if err != nil {
		return err
	}
	host := req.Host
	if host == "" {
		host = u.Host
	}
	// The server sees the request target alone, as it arrives in :path.
	*target = *u
	target.Scheme, target.Host, target.User, target.Fragment, target.RawFragment = "", "", nil, "", ""
	*sreq = http.Request{
		Method:        method,
		URL:           target,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: contentLength(req),
		Host:          host,
		RemoteAddr:    "inproc",
		RequestURI:    u.RequestURI(),
	}
	if len(req.Trailer) > 0 {
		// Declared: the values arrive at the end of the body.
		sreq.Trailer = make(http.Header, len(req.Trailer))
		for k := range req.Trailer {
			sreq.Trailer[http.CanonicalHeaderKey(k)] = nil
		}
	}
	return nil
}

// hasBody reports whether req has a body to send.
func hasBody(req *http.Request) bool {
	return req.Body != nil && req.Body != http.NoBody
}

// contentLength is the length of req's body: 0 if it has none, -1 if
// unknown (a client's 0 with a body means unknown).
func contentLength(req *http.Request) int64 {
	switch {
	case !hasBody(req):
		return 0
	case req.ContentLength == 0:
		return -1
	}
	return req.ContentLength
}

// requestHeader is req's header as the handler gets it: canonical keys,
// Host and the connection-specific fields left out, Content-Length and
// User-Agent as net/http's HTTP/2 client sends them. A field a client
// could not send is an error.
func requestHeader(req *http.Request, method string) (http.Header, error) {
	h, spare, err := cloneHeader(req.Header, 2, true)
	if err != nil {
		return nil, err
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
	if _, ok := h["User-Agent"]; !ok {
		setOne(h, "User-Agent", defaultUserAgent, &spare)
	}
	return h, nil
}

// defaultUserAgent is net/http's, which its HTTP/2 client sends when the
// request names none.
const defaultUserAgent = "Go-http-client/2.0"

// isToken reports whether s is a non-empty RFC 9110 token, as methods and
// header field names must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || !tokenChars[c] {
			return false
		}
	}
	return true
}

// tokenChars are the characters of a token.
var tokenChars = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// statusLine is a response's Status for code, as HTTP/2 clients make it.
func statusLine(code int) string {
	if code == http.StatusOK {
		return "200 OK"
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}
