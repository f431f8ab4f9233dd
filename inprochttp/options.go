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

// WithErrorLog logs what net/http's server would log to its ErrorLog, a
// handler's panic with its stack above all, to l instead of the log
// package's standard logger.
func WithErrorLog(l *log.Logger) Option {
	return optionFunc(func(t *transport) { t.errorLog = l })
}

// WithServer makes srv the server handlers find in their request's
// context under [http.ServerContextKey], as net/http's server puts itself
// there. The transport reads none of srv's fields: its handler is
// NewTransport's, and its limits and log are set by this package's
// options. Without WithServer, handlers find a server of the transport's
// own, whose Handler and ErrorLog are the transport's. WithServer panics
// if srv is nil.
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
