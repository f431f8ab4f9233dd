package inprochttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/net/http/httpguts"
)

// responseWriter is the handler's http.ResponseWriter. It is an
// http.Flusher, an http.CloseNotifier and an http.Pusher, and
// http.ResponseController finds FlushError, EnableFullDuplex and the
// deadlines' setters on it; it cannot be hijacked, as net/http's HTTP/2
// writer cannot.
type responseWriter struct {
	ex *exchange
	h  http.Header // the handler's own, snapshotted when the head is written
	// closeNotify is CloseNotify's channel, made at its first call;
	// under ex.mu.
	closeNotify chan bool
	// finished: ServeHTTP has returned, and the writer's methods panic.
	// Atomic, as goroutines the handler left may call them.
	finished atomic.Bool
}

// live panics, as net/http's HTTP/2 writer does, if ServeHTTP has
// returned: a handler that leaks its writer crashes a server over a
// socket, and must crash in-process too, so that its tests catch it.
func (w *responseWriter) live(method string) {
	if w.finished.Load() {
		panic(method + " called after Handler finished")
	}
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
	_ http.CloseNotifier  = (*responseWriter)(nil)
	_ http.Pusher         = (*responseWriter)(nil)
)

// Header returns the header map the response's head is taken from when it
// is written; keys set under http.TrailerPrefix, or declared in "Trailer",
// are sent as trailers when the handler returns.
func (w *responseWriter) Header() http.Header {
	w.live("Header")
	if w.h == nil {
		w.h = make(http.Header)
	}
	return w.h
}

// WriteHeader sets the response's status and takes its header from
// Header; they reach the client at the first flush. A 1xx status is
// informational: the client's httptrace.ClientTrace.Got1xxResponse sees
// it. Once the head is written, WriteHeader does nothing, whatever the
// code; before, a code outside 100-999 panics, as net/http's does.
func (w *responseWriter) WriteHeader(code int) {
	w.live("WriteHeader")
	ex := w.ex
	ex.mu.Lock()
	if ex.writeEnd != nil || ex.status != 0 {
		// Over (a call from a goroutine the handler left behind), or
		// written: net/http's HTTP/2 writer ignores it and logs
		// nothing (the "superfluous" log is its HTTP/1 writer's).
		ex.mu.Unlock()
		return
	}
	if code < 100 || code > 999 {
		ex.mu.Unlock()
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 200 {
		ex.writeHeaderLocked(code)
	}
	ex.mu.Unlock()
	if code < 200 {
		ex.informational(code, w.h)
	}
}

// informational hands a 1xx response with header h to the client's trace,
// as net/http sends it: without the final response's Content-Length, nor
// Transfer-Encoding, its other connection-specific fields included. The
// client bounds its head, as net/http's client bounds each HEADERS frame,
// and, unless a trace's Got1xxResponse sees them, all the 1xx heads of
// the response together: one over fails the request.
func (ex *exchange) informational(code int, h http.Header) {
	mh, _, _ := cloneHeader(h, 0, informationalHead)
	trace := ex.trace()
	seen := trace != nil && trace.Got1xxResponse != nil
	ex.mu.Lock()
	ex.informed = true
	if ex.readEnd != nil {
		// The client's request is over: net/http's client drops what
		// arrives on a stream it reset, and a trace called now would
		// race with a caller that took its request for done.
		ex.mu.Unlock()
		return
	}
	var tooLarge error
	size := fieldSize(":status", 3) + headerListSize(mh, false)
	if size > ex.t.maxResponseList {
		tooLarge = ex.t.headTooLarge("1xx response header list", code, mh, size)
	} else if !seen {
		// A trace that sees them is left to bound them, as net/http
		// leaves it.
		ex.informationalSize += size
		if ex.informationalSize > ex.t.maxInformationalList {
			tooLarge = ex.t.informationalTooLarge(ex.informationalSize)
		}
	}
	firstByte := ex.firstByteLocked(tooLarge)
	ex.mu.Unlock()
	if firstByte {
		ex.traceFirstByte()
	}
	if tooLarge != nil {
		ex.clientEnd(tooLarge, tooLarge) // as net/http's client resets the stream
		return
	}
	if trace == nil {
		return
	}
	if seen {
		if err := trace.Got1xxResponse(code, textproto.MIMEHeader(mh)); err != nil {
			// net/http's client resets the stream, and fails the
			// request with the stream error, the trace's error its
			// cause.
			se := newStreamError(errCodeProtocol, "the client's trace refused a 1xx response", err)
			ex.clientEnd(se, se)
			return
		}
	}
	if code == http.StatusContinue && trace.Got100Continue != nil {
		trace.Got100Continue()
	}
}

// sendContinue sends 100 Continue, as net/http's server does at the
// handler's first read of a body the client sent "Expect: 100-continue"
// with, unless a head has gone already, a 1xx one included
// (golang.org/issue/14030).
func (ex *exchange) sendContinue() {
	ex.mu.Lock()
	late := ex.sent || ex.informed || ex.writeEnd != nil || ex.readEnd != nil
	ex.mu.Unlock()
	if !late {
		ex.informational(http.StatusContinue, nil)
	}
}

// CloseNotify returns a channel that receives true once the exchange is
// over for the handler (the client has gone, or the handler has
// returned), when its context ends, as net/http's HTTP/2 writer signals
// its stream's close. Deprecated in net/http, it is served for the
// handlers that still use it.
func (w *responseWriter) CloseNotify() <-chan bool {
	w.live("CloseNotify")
	ex := w.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if w.closeNotify == nil {
		ch := make(chan bool, 1)
		w.closeNotify = ch
		// The context always ends, at the latest as the handler
		// returns, so this runs once and is done.
		context.AfterFunc(ex.sreq.Context(), func() { ch <- true })
	}
	return w.closeNotify
}

// Write writes p to the response's body, writing the head first if it has
// not been (status 200). It waits while the window is full. Once the
// client has gone (its context ended or it closed the body) or the write
// deadline has passed, it fails as net/http's does: not while what the
// handler wrote since its last flush fits in 4 KiB, then at every write.
// It fails once the bytes written go past a Content-Length of 1 or more
// that went with the head, with an error that is no
// http.ErrContentLength, as net/http's HTTP/2 writer's is not. A
// declared 0 lets them go, as net/http's HTTP/2 writer does, and the
// client's read fails.
func (w *responseWriter) Write(p []byte) (int, error) {
	w.live("Write")
	return write(w.ex, p)
}

// WriteString is Write without converting s.
func (w *responseWriter) WriteString(s string) (int, error) {
	w.live("WriteString")
	return write(w.ex, s)
}

// Flush sends the head, if it has not been, and what was written since the
// last flush.
func (w *responseWriter) Flush() {
	w.live("Flush")
	w.FlushError()
}

// FlushError is Flush, saying whether the client has gone; it is what
// http.ResponseController's Flush calls.
func (w *responseWriter) FlushError() error {
	w.live("FlushError")
	ex := w.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if err := ex.writeErrLocked(); err != nil {
		if ex.win.buffered() > 0 {
			// net/http's buffer failed to flush what it held, and
			// keeps the error.
			ex.win.stuck = true
		}
		return err
	}
	ex.flushLocked()
	return nil
}

// Push pushes nothing, as net/http's HTTP/2 writer pushes nothing to a
// client that disabled server push, as Go's client does. It checks
// target and opts as net/http's does, and fails as it does if they are
// not a GET or HEAD of a path or of an http URL, with no header a pushed
// request may not have. Then it fails with errStreamClosed once the
// response has ended, and with http.ErrNotSupported while it has not.
func (w *responseWriter) Push(target string, opts *http.PushOptions) error {
	w.live("Push")
	if err := checkPush(target, opts); err != nil {
		return err
	}
	ex := w.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.writeEnd != nil || ex.readEnd != nil {
		return errStreamClosed
	}
	return http.ErrNotSupported
}

// checkPush is why net/http's HTTP/2 writer refuses to push target with
// opts before it asks the client, if it does: requests here are never
// TLS, so the scheme a push must have is http.
func checkPush(target string, opts *http.PushOptions) error {
	if opts == nil {
		opts = new(http.PushOptions)
	}
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme == "" && !strings.HasPrefix(target, "/"):
		return fmt.Errorf("inprochttp: target must be an absolute URL or an absolute path: %q", target)
	case u.Scheme != "" && u.Scheme != "http":
		return fmt.Errorf("inprochttp: cannot push URL with scheme %q from request with scheme %q", u.Scheme, "http")
	case u.Scheme != "" && u.Host == "":
		return errors.New("inprochttp: URL must have a host")
	}
	for k := range opts.Header {
		if strings.HasPrefix(k, ":") {
			return fmt.Errorf("inprochttp: promised request headers cannot include pseudo header %q", k)
		}
		// Fields of a request body, which a pushed request has not,
		// and Host, which its URL gives.
		for _, no := range []string{"content-length", "content-encoding", "trailer", "te", "expect", "host"} {
			if asciiEqualFold(k, no) {
				return fmt.Errorf("inprochttp: promised request headers cannot include %q", k)
			}
		}
		if connectionSpecific(k) {
			return fmt.Errorf("inprochttp: request header %q is not valid in HTTP/2", k)
		}
	}
	if !validTE(opts.Header["Te"]) {
		return errors.New(`inprochttp: request header "TE" may only be "trailers" in HTTP/2`)
	}
	if m := opts.Method; m != "" && m != http.MethodGet && m != http.MethodHead {
		return fmt.Errorf("inprochttp: method %q must be GET or HEAD", m)
	}
	return nil
}

// EnableFullDuplex does nothing: the exchange is always full duplex, as
// HTTP/2 is. http.ResponseController calls it. Unlike the writer's other
// methods, it does not panic once ServeHTTP has returned, as net/http's
// does not.
func (w *responseWriter) EnableFullDuplex() error { return nil }

// write appends p to the window, waiting for room as long as it is full.
func write[T []byte | string](ex *exchange, p T) (int, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.writeEnd == io.EOF {
		return 0, errHandlerReturned // a call that raced the return
	}
	if ex.status == 0 {
		ex.writeHeaderLocked(http.StatusOK)
	}
	if !bodyAllowed(ex.status) {
		return 0, http.ErrBodyNotAllowed
	}
	// Counted before the check, as net/http's HTTP/2 writer counts
	// them: once a write has gone over the length, every later one
	// fails, however short.
	ex.written += int64(len(p))
	if ex.sent && ex.length > 0 && ex.written > ex.length {
		// A declared 0 is no length to net/http's writer, which lets
		// the bytes go; the client, which trusts the 0, fails its read
		// of them, so the response's breakage is not hidden from it.
		return 0, errWroteTooMuch
	}
	// net/http's writer checks the above before its buffer takes the
	// bytes, and its buffer fails only as it flushes.
	if err := ex.writeErrLocked(); err != nil {
		if ex.head {
			// net/http's buffer has failed already, or never fails:
			// the client has its HEAD response's head.
			return 0, err
		}
		return ex.win.hold(len(p), err)
	}
	if ex.head {
		// A HEAD response has no body, but what is written before the
		// head is sent still gives its Content-Type and Content-Length.
		if !ex.sent {
			writeWindowUpTo(&ex.win, p, chunkSize)
		}
		if !ex.sent && ex.written > chunkSize {
			ex.flushLocked()
		}
		return len(p), nil
	}
	n := 0
	for n < len(p) {
		room := windowSize - ex.win.waiting()
		if room <= 0 {
			// The client must see what waits, or it would wait for us.
			ex.flushLocked()
			if testHookWindowFull != nil {
				testHookWindowFull(ex)
			}
			ex.win.waitingForRoom = true
			ex.cond.Wait()
			ex.win.waitingForRoom = false
			if err := ex.writeErrLocked(); err != nil {
				return n, err
			}
			continue
		}
		k := min(room, len(p)-n)
		writeWindow(&ex.win, p[n:n+k])
		n += k
	}
	if ex.win.unflushed() > chunkSize {
		// What net/http's 4 KiB bufio.Writer does with a write that
		// does not fit: a chunk full to the last byte still waits, so
		// a response of 4 KiB that ends with the handler has its
		// Content-Length.
		ex.flushLocked()
	}
	return n, nil
}

// testHookWindowFull, if set, is called with ex.mu held as a write waits
// for room.
var testHookWindowFull func(*exchange)

// writeErrLocked is why the handler can write no more, if it cannot.
func (ex *exchange) writeErrLocked() error {
	switch {
	case ex.writeEnd == io.EOF:
		return errHandlerReturned
	case ex.writeEnd != nil: // reset
		return ex.closeErr
	case ex.readEnd != nil:
		return goneError(ex.readEnd)
	}
	return nil
}

// writeHeaderLocked takes the response's head from the handler's header,
// as net/http does at WriteHeader or the first write. As net/http's
// server, it reads only the canonical keys of the handler's header for
// itself; the other keys are fields like any other to the client,
// which merges them with the canonical ones (see leftOut).
func (ex *exchange) writeHeaderLocked(code int) {
	ex.status = code
	h := ex.writer.h
	_, hasType := h["Content-Type"]
	ex.sniff = !hasType && h.Get("Content-Encoding") == "" && bodyAllowed(code)
	ex.header, ex.spare, _ = cloneHeader(h, 2, responseHead)
	// net/http's server adds a Date unless the handler's header has the
	// key, even with no value (its documented way to send none).
	_, ex.dated = h["Date"]
	// The handler's "Trailer" field, not the client's, declares the
	// trailers the server sends. The field stays in the head until the
	// client reads it.
	ex.declared = declaredTrailers(h["Trailer"])
	// The first Content-Length is sent, after the other fields, if it is
	// a length; if it is empty, the field is sent as it is (cloneHeader
	// kept it) and no length is counted.
	if cl, ok := h["Content-Length"]; ok {
		switch {
		case len(cl) == 0 || cl[0] == "":
			ex.uncounted = true
		case httpguts.ValidHeaderFieldValue(cl[0]):
			if n, err := strconv.ParseUint(cl[0], 10, 63); err == nil {
				ex.length = int64(n)
				addOne(ex.header, "Content-Length", cl[0], &ex.spare)
			}
		}
	}
}

// flushLocked sends the head, if it has not been, and makes every byte
// written readable.
func (ex *exchange) flushLocked() {
	if ex.status == 0 {
		ex.writeHeaderLocked(http.StatusOK)
	}
	if !ex.sent {
		ex.sendHeadLocked()
	}
	if ex.head {
		ex.win.discard()
	}
	ex.win.flush()
	ex.cond.Broadcast()
}

// sendHeadLocked completes the head as net/http's HTTP/2 server does when
// it sends it: a Content-Type detected from the first bytes if the handler
// set none, a Content-Length if the handler has returned having written
// the whole body; notes whether the head ends the response; and logs the
// declared trailers that may not be trailers, as net/http's server logs
// them then.
func (ex *exchange) sendHeadLocked() {
	// After the values of the keys in other cases, which the client
	// merges with them.
	body := ex.win.pending()
	if ex.sniff && len(body) > 0 {
		addOne(ex.header, "Content-Type", http.DetectContentType(body), &ex.spare)
	}
	if ex.length < 0 && !ex.uncounted && ex.writeEnd != nil && bodyAllowed(ex.status) && (len(body) > 0 || !ex.head) {
		ex.length = int64(len(body))
		addOne(ex.header, "Content-Length", strconv.Itoa(len(body)), &ex.spare)
	}
	ex.ended = ex.writeEnd != nil && len(body) == 0 && len(ex.trailer) == 0
	ex.sent = true
	if len(ex.declared) > 0 {
		ex.t.logInvalidTrailers(ex.declared)
	}
}

// bodyAllowed reports whether a response of status may have a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
