package inprochttp

import (
	"log"
	"net/http"
	"runtime"
)

// An Option configures the transport [NewTransport] returns.
type Option interface{ apply(*transport) }

// optionFunc is an Option that is a function.
type optionFunc func(*transport)

func (f optionFunc) apply(t *transport) { f(t) }

// WithErrorLog logs to l what net/http's server would log to its ErrorLog.
// Above all, that is a handler's panic with its stack.
// Without it, the log package's standard logger gets them.
func WithErrorLog(l *log.Logger) Option {
	return optionFunc(func(t *transport) { t.errorLog = l })
}

// WithMaxHeaderBytes bounds the request head a handler is handed.
// It does what [http.Server.MaxHeaderBytes] does on net/http's HTTP/2
// server.
//
// The bound is n bytes and 320 more.
// net/http's HTTP/2 server adds those for the 32 bytes HTTP/2 counts a
// field.
// HTTP/2 counts each field's name, its value and 32 bytes:
//   - pseudo-header fields (:authority, :method, :path, :scheme) included;
//   - each cookie-pair as a field of its own.
//
// A request over the bound fails in RoundTrip and never reaches the
// handler.
// net/http's client likewise refuses to send it.
// A request's trailers are bounded alike, when the handler reads the end of
// the body.
// Trailers over the bound fail that read and the client's request.
// net/http's client likewise resets the stream rather than send them.
//
// Zero or less means [http.DefaultMaxHeaderBytes], as on net/http.
// A bound larger than an HTTP/2 setting can say (4 GiB) is the largest it
// can say.
// There net/http's server wraps it to a small one.
func WithMaxHeaderBytes(n int) Option {
	return optionFunc(func(t *transport) { t.maxHeaderBytes = n })
}

// WithMaxResponseHeaderBytes bounds the response heads and trailers the
// client takes.
// It does what [http.Transport.MaxResponseHeaderBytes] does on net/http's
// HTTP/2 client.
// The bound is n bytes and 320 more, counted as [WithMaxHeaderBytes] says.
//
// What the bound applies to:
//   - A response whose head is over it fails the client's RoundTrip with a
//     stream error (PROTOCOL_ERROR).
//     The handler's context ends, as net/http's client resets the stream.
//   - Each 1xx response's head is bounded alike.
//   - Unless the request's [net/http/httptrace.ClientTrace] has a
//     Got1xxResponse, a response's 1xx heads are bounded together too.
//     net/http's client bounds those it shows no one the same way.
//   - A response's trailers are bounded alike.
//     They are counted in the order of their keys, as net/http's server
//     sends them.
//     The fields from the first that does not fit on are dropped, with no
//     error, as net/http's client drops them.
//
// Where net/http's client fails its connection on a head or on trailers
// over the bound, this fails with a connection error instead.
// The error fails RoundTrip or the client's read of the body's end.
// That happens in two cases:
//   - on a name or value longer than the bound (COMPRESSION_ERROR);
//   - on a 16 KiB frame of the head's or the trailers' HPACK block longer
//     than twice what is left of the bound as it comes (PROTOCOL_ERROR).
//     Every frame after the first field that does not fit is such a frame.
//
// Bytes on the wire are reckoned as HPACK sends fields it has not sent
// before.
// A field net/http's server sent before, or one HPACK's static table holds,
// costs it fewer bytes.
// So within a few bytes of an edge the two may disagree.
//
// Zero or less means 10 MiB, net/http's HTTP/2 client's default.
// A bound larger than an HTTP/2 setting can say (4 GiB) means 16 MiB, as it
// does there.
// For 1xx heads together, such a bound is n itself.
func WithMaxResponseHeaderBytes(n int64) Option {
	return optionFunc(func(t *transport) { t.maxResponseHeaderBytes = n })
}

// WithServer makes srv the server handlers find in their request's context
// under [http.ServerContextKey].
// net/http's server puts itself there.
// The transport reads none of srv's fields.
// Its handler is NewTransport's, and its limits and log are set by this
// package's options.
// Without WithServer, handlers find a server of the transport's own.
// That server's Handler, ErrorLog and MaxHeaderBytes are the transport's.
// WithServer panics if srv is nil.
func WithServer(srv *http.Server) Option {
	if srv == nil {
		panic("inprochttp: WithServer: nil *http.Server")
	}
	return optionFunc(func(t *transport) { t.server = srv })
}

// logf logs to the transport's error log.
func (t *transport) logf(format string, args ...any) {
	if t.errorLog != nil {
		t.errorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// logPanic logs the panic p of the handler of r, with the stack, unless it
// is none (runtime.Goexit) or http.ErrAbortHandler, as net/http does.
func (t *transport) logPanic(r *http.Request, p any) {
	if p == nil || p == http.ErrAbortHandler {
		return
	}
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	t.logf("inprochttp: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, p, buf)
}
