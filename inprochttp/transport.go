package inprochttp

import (
	"context"
	"errors"
	"log"
	"net/http"
	"strconv"
)

// NewTransport returns an [http.RoundTripper] that serves every request by
// calling h.ServeHTTP in this process.
// It has the semantics of net/http's HTTP/2 server (see the package
// documentation).
// Any URL with the scheme http or https and a host reaches h.
// The host is only a name, which the handler sees as the request's Host.
//
// NewTransport panics if h is nil, as [http.Handle] does.
// Nil options are ignored.
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
	t.maxRequestList = maxRequestHeaderList(t.maxHeaderBytes)
	t.maxResponseList = maxResponseHeaderList(t.maxResponseHeaderBytes)
	t.maxInformationalList = maxInformationalList(t.maxResponseHeaderBytes)
	if t.server == nil {
		t.server = &http.Server{Handler: h, ErrorLog: t.errorLog, MaxHeaderBytes: t.maxHeaderBytes}
	}
	// Made once, so that an exchange's context costs nothing more for
	// them.
	t.base = context.WithValue(context.WithValue(context.Background(),
		http.ServerContextKey, t.server), http.LocalAddrContextKey, inprocAddr{})
	return t
}

// transport is the RoundTripper NewTransport returns.
type transport struct {
	handler  http.Handler
	errorLog *log.Logger // nil: the log package's standard logger
	// The limits as options set them, and the header list sizes they
	// bound requests' and responses' heads to, and a response's 1xx
	// heads together.
	maxHeaderBytes                  int
	maxResponseHeaderBytes          int64
	maxRequestList, maxResponseList int64
	maxInformationalList            int64
	// server is what handlers find under http.ServerContextKey:
	// WithServer's, or one of the transport's own.
	server *http.Server
	// base is the context every handler's context derives from: it
	// holds what net/http's server puts in it, and no client's values.
	base context.Context
}

// inprocAddr is the handler's local address and the request's
// RemoteAddr: the in-process exchange's, which no socket has.
type inprocAddr struct{}

// inprocAddrName is inprocAddr's network and address.
const inprocAddrName = "inproc"

func (inprocAddr) Network() string { return inprocAddrName }
func (inprocAddr) String() string  { return inprocAddrName }

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
	if hasBody(req) && req.ContentLength < -1 {
		// net/http's client sends the head, with no Content-Length,
		// then fails at its first read of the body, longer than any
		// negative length, and resets the stream: the handler gets
		// none of the body. Ended before the handler starts, so that
		// it cannot read the body first.
		ex.clientEnd(errBodyTooLong, errBodyTooLong)
	}
	go ex.serve()
	return ex.response()
}

// statusLine is a response's Status for code, as HTTP/2 clients make it.
func statusLine(code int) string {
	if code == http.StatusOK {
		return "200 OK"
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}
