package inprochttp

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
)

// responseWriter is the handler's http.ResponseWriter. It is an
// http.Flusher, and http.ResponseController finds FlushError and
// EnableFullDuplex on it; it has no deadlines and cannot be hijacked, as
// net/http's HTTP/2 writer cannot.
type responseWriter struct {
	ex *exchange
	h  http.Header // the handler's own, snapshotted when the head is written
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

// Header returns the header map the response's head is taken from when it
// is written; keys set under http.TrailerPrefix, or declared in "Trailer",
// are sent as trailers when the handler returns.
func (w *responseWriter) Header() http.Header {
	if w.h == nil {
		w.h = make(http.Header)
	}
	return w.h
}

// WriteHeader sets the response's status and takes its header from
// Header; they reach the client at the first flush. A 1xx status is
// informational: the client's httptrace.ClientTrace.Got1xxResponse sees
// it. A code outside 100-999 panics, as net/http's does.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	ex := w.ex
	ex.mu.Lock()
	over, written := ex.writeEnd != nil, ex.status != 0
	if !over && !written && code >= 200 {
		ex.writeHeaderLocked(code)
	}
	ex.mu.Unlock()
	switch {
	case over: // a call from a goroutine the handler left behind
	case written:
		ex.t.logf("inprochttp: superfluous response.WriteHeader call")
	case code < 200:
		w.informational(code)
	}
}

// informational hands a 1xx response to the client's trace.
func (w *responseWriter) informational(code int) {
	trace := httptrace.ContextClientTrace(w.ex.creq.Context())
	if trace == nil || trace.Got1xxResponse == nil {
		return
	}
	h, _, _ := cloneHeader(w.h, 0, false)
	if err := trace.Got1xxResponse(code, textproto.MIMEHeader(h)); err != nil {
		w.ex.clientEnd(err, err) // as net/http's client ends the request
	}
}

// Write writes p to the response's body, writing the head first if it has
// not been (status 200). It waits while the window is full. It fails once
// the client has gone: its context ended or it closed the body.
func (w *responseWriter) Write(p []byte) (int, error) { return write(w.ex, p) }

// WriteString is Write without converting s.
func (w *responseWriter) WriteString(s string) (int, error) { return write(w.ex, s) }

// Flush sends the head, if it has not been, and what was written since the
// last flush.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush, saying whether the client has gone; it is what
// http.ResponseController's Flush calls.
func (w *responseWriter) FlushError() error {
	ex := w.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if err := ex.writeErrLocked(); err != nil {
		return err
	}
	ex.flushLocked()
	return nil
}

// EnableFullDuplex does nothing: the exchange is always full duplex, as
// HTTP/2 is. http.ResponseController calls it.
func (w *responseWriter) EnableFullDuplex() error { return nil }

// write appends p to the window, waiting for room as long as it is full.
func write[T []byte | string](ex *exchange, p T) (int, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if err := ex.writeErrLocked(); err != nil {
		return 0, err
	}
	if ex.status == 0 {
		ex.writeHeaderLocked(http.StatusOK)
	}
	switch {
	case !bodyAllowed(ex.status):
		return 0, http.ErrBodyNotAllowed
	case ex.sent && ex.length >= 0 && ex.written+int64(len(p)) > ex.length:
		return 0, http.ErrContentLength
	case ex.head:
		// A HEAD response has no body, but what is written before the
		// head is sent still gives its Content-Type and Content-Length.
		if !ex.sent {
			ex.buf = append(ex.buf, p[:min(len(p), chunkSize-len(ex.buf))]...)
		}
		ex.written += int64(len(p))
		if !ex.sent && ex.written >= chunkSize {
			ex.flushLocked()
		}
		return len(p), nil
	}
	n := 0
	for n < len(p) {
		room := windowSize - (len(ex.buf) - ex.r)
		if room <= 0 {
			// The client must see what waits, or it would wait for us.
			ex.flushLocked()
			if testHookWindowFull != nil {
				testHookWindowFull(ex)
			}
			ex.waitingForRoom = true
			ex.cond.Wait()
			ex.waitingForRoom = false
			if err := ex.writeErrLocked(); err != nil {
				ex.written += int64(n)
				return n, err
			}
			continue
		}
		k := min(room, len(p)-n)
		ex.appendLocked(k)
		ex.buf = append(ex.buf, p[n:n+k]...)
		n += k
	}
	ex.written += int64(n)
	if len(ex.buf)-ex.flushed >= chunkSize {
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
	case ex.writeEnd != nil:
		return errHandlerReturned
	case ex.readEnd != nil:
		return goneError(ex.readEnd)
	}
	return nil
}

// writeHeaderLocked takes the response's head from the handler's header,
// as net/http does at WriteHeader or the first write.
func (ex *exchange) writeHeaderLocked(code int) {
	ex.status = code
	h := ex.writer.h
	_, hasType := h["Content-Type"]
	ex.sniff = !hasType && h.Get("Content-Encoding") == "" && bodyAllowed(code)
	ex.header, ex.spare, _ = cloneHeader(h, 2, false)
	if t, ok := ex.header["Trailer"]; ok {
		ex.declared = declaredTrailers(t)
		delete(ex.header, "Trailer") // the client sees the keys in Response.Trailer
	}
	if cl, ok := ex.header["Content-Length"]; ok {
		if n, err := strconv.ParseInt(cl[0], 10, 64); err == nil && n >= 0 && len(cl) == 1 {
			ex.length = n
		} else {
			delete(ex.header, "Content-Length")
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
		ex.buf = ex.buf[:0] // no one reads it
	}
	ex.flushed = len(ex.buf)
	ex.cond.Broadcast()
}

// sendHeadLocked completes the head as net/http's HTTP/2 server does when
// it sends it: a Content-Type detected from the first bytes if the handler
// set none, a Content-Length if the handler has returned having written
// the whole body; and notes whether the head ends the response.
func (ex *exchange) sendHeadLocked() {
	if ex.sniff && len(ex.buf) > 0 {
		setOne(ex.header, "Content-Type", http.DetectContentType(ex.buf), &ex.spare)
	}
	if ex.length < 0 && ex.writeEnd != nil && bodyAllowed(ex.status) && (len(ex.buf) > 0 || !ex.head) {
		ex.length = int64(len(ex.buf))
		setOne(ex.header, "Content-Length", strconv.Itoa(len(ex.buf)), &ex.spare)
	}
	ex.ended = ex.writeEnd != nil && len(ex.buf) == 0 && len(ex.trailer) == 0
	ex.sent = true
}

// bodyAllowed reports whether a response of status may have a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
