package inprochttp

import (
	"fmt"
	"os"
	"time"
)

// deadlines are a handler's read and write deadlines, set through
// http.ResponseController, as net/http's HTTP/2 writer has them: a timer
// for each, nil until set. The exchange allocates them at the first set,
// as few handlers set any; they are under its mu, and stop when the
// handler's response ends (endWriteLocked), so that no timer outlives
// the exchange.
type deadlines struct {
	read, write *time.Timer
}

// SetReadDeadline bounds the handler's reads of the request body: once d
// passes, they fail with an error that wraps os.ErrDeadlineExceeded, and
// the client's body is closed, there being no other way to end a read
// that waits for the client. The zero time means none. Once a deadline
// has passed, setting another does nothing, as on net/http.
func (w *responseWriter) SetReadDeadline(d time.Time) error {
	w.live("SetReadDeadline")
	return w.ex.setDeadline(d, false)
}

// SetWriteDeadline bounds the handler's response: once d passes, the
// response is reset as net/http's server resets its stream then, with
// INTERNAL_ERROR. The handler's writes (and those waiting for the client
// to read) fail with os.ErrDeadlineExceeded. Its reads of the request
// body fail with that stream error. Its context ends. The client gets a
// stream error. The zero time means none. Once a deadline has passed,
// setting another does nothing, as on net/http.
func (w *responseWriter) SetWriteDeadline(d time.Time) error {
	w.live("SetWriteDeadline")
	return w.ex.setDeadline(d, true)
}

// setDeadline sets the read or write deadline to d.
func (ex *exchange) setDeadline(d time.Time, write bool) error {
	expire := ex.readDeadlineExpired
	if write {
		expire = ex.writeDeadlineExpired
	}
	if !d.IsZero() && d.Before(time.Now()) {
		expire()
		return nil
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.writeEnd != nil {
		return nil // over: no timer to start, none to stop it
	}
	if ex.deadlines == nil {
		if d.IsZero() {
			return nil
		}
		ex.deadlines = new(deadlines)
	}
	t := &ex.deadlines.read
	if write {
		t = &ex.deadlines.write
	}
	switch {
	case *t != nil && !(*t).Stop():
		// It has passed: net/http keeps it so.
	case d.IsZero():
		*t = nil
	case *t == nil:
		*t = time.AfterFunc(time.Until(d), expire)
	default:
		(*t).Reset(time.Until(d))
	}
	return nil
}

// stopDeadlinesLocked stops the deadlines' timers. One that is firing
// finds the response over, and does nothing.
func (ex *exchange) stopDeadlinesLocked() {
	if dl := ex.deadlines; dl != nil {
		if dl.read != nil {
			dl.read.Stop()
		}
		if dl.write != nil {
			dl.write.Stop()
		}
	}
}

// readDeadlineExpired ends the request body for the handler, as net/http's
// server closes its side of the body with os.ErrDeadlineExceeded.
func (ex *exchange) readDeadlineExpired() {
	if !hasBody(ex.creq) {
		return // http.NoBody: its reads end at once
	}
	ex.inEndWith(fmt.Errorf("inprochttp: read deadline passed: %w", os.ErrDeadlineExceeded))
}

// writeDeadlineExpired resets the response, as net/http's server resets
// the stream with INTERNAL_ERROR, naming os.ErrDeadlineExceeded as its
// cause to the handler, and its writes fail with that.
func (ex *exchange) writeDeadlineExpired() {
	const why = "the handler's write deadline passed"
	ex.reset(newStreamError(errCodeInternal, why, errFromPeer),
		newStreamError(errCodeInternal, why, os.ErrDeadlineExceeded), os.ErrDeadlineExceeded)
}
