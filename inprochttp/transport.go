package inprochttp

import (
	"errors"
	"log"
	"net/http"
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

// statusLine is a response's Status for code, as HTTP/2 clients make it.
func statusLine(code int) string {
	if code == http.StatusOK {
		return "200 OK"
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}
