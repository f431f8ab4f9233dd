package inprochttp

import (
	"fmt"
	"io"
	"net/http"
	"slices"

	"golang.org/x/net/http/httpguts"
)

// responseBody is the client's Response.Body: it reads the window the
// handler writes into.
type responseBody struct {
	ex *exchange
	// closed: the client closed it, which its reads see even after the
	// body's end, as net/http's client's do. Under ex.mu.
	closed bool
}

// Read reads what the handler has flushed, waiting until there is some or
// the response has ended. At the end, the response's Trailer holds the
// trailers and Read returns io.EOF; if the handler panicked, the error of
// a stream reset, once what it flushed has been read. Once the client's
// context has ended, or its deadline passed by the clock, or the body is
// closed, Read fails at once.
func (b *responseBody) Read(p []byte) (int, error) {
	ex := b.ex
	ex.mu.Lock()
	if b.closed {
		ex.mu.Unlock()
		return 0, errBodyClosed
	}
	for {
		if err := ex.readEnd; err != nil {
			ex.mu.Unlock()
			return 0, err
		}
		if ex.pastDeadline() {
			// What the handler wrote may answer its context's end,
			// which is the client's, though the client's timer has
			// yet to say so: the client's context has ended.
			ex.mu.Unlock()
			err := ex.clientCtxErr()
			ex.clientEnd(err, err)
			return 0, err
		}
		if ex.win.readable() {
			n, drained := ex.win.read(p)
			if ex.win.roomReturned() {
				ex.cond.Broadcast()
			}
			if ex.remain >= 0 {
				if int64(n) > ex.remain {
					// As net/http's client, which trusts Content-Length.
					n = int(ex.remain)
					ex.mu.Unlock()
					ex.clientEnd(errTooLong, errTooLong)
					return n, errTooLong
				}
				ex.remain -= int64(n)
			}
			if drained && ex.writeEnd == io.EOF {
				// The last bytes: say so now, saving the client a Read.
				return n, ex.readEOFLocked()
			}
			ex.mu.Unlock()
			return n, nil
		}
		switch {
		case ex.writeEnd == io.EOF:
			return 0, ex.readEOFLocked()
		case ex.writeEnd != nil:
			err := ex.writeEnd
			ex.mu.Unlock()
			return 0, err
		case len(p) == 0:
			ex.mu.Unlock()
			return 0, nil
		}
		ex.cond.Wait()
	}
}

// readEOFLocked ends the client's side at the body's end, with the
// trailers delivered, and unlocks ex.mu. A body shorter than its
// Content-Length ends with io.ErrUnexpectedEOF.
func (ex *exchange) readEOFLocked() error {
	err := io.EOF
	if ex.remain > 0 {
		err = io.ErrUnexpectedEOF
	}
	// The client takes the trailers as net/http's client does: cut to
	// its bound, or, where that client fails its connection on them,
	// not at all, failing the read.
	trailer, tooLarge := ex.t.cutTrailers(ex.trailer)
	if tooLarge != nil {
		err = tooLarge
	}
	ex.readEnd = err
	ex.win.drop()
	if tooLarge == nil {
		ex.deliverTrailersLocked(trailer)
	}
	ex.mu.Unlock()
	ex.stopWatching()
	return err
}

// Close ends the exchange for the client. Before the body's end, it is
// what a stream reset is over HTTP/2: the handler's context ends, and so
// do its writes.
func (b *responseBody) Close() error {
	b.ex.mu.Lock()
	b.closed = true
	b.ex.mu.Unlock()
	b.ex.clientEnd(errBodyClosed, errClientClosed)
	return nil
}

// requestBody is the handler's Request.Body: the client's own, read on the
// handler's goroutine as the client writes it, with no buffer between; or,
// if the client sent none, an empty body, never http.NoBody, as net/http's
// server gives one of its own.
type requestBody struct {
	ex  *exchange
	src io.ReadCloser // the client's; nil if it sent none
	// On the goroutine that reads:
	length        int64 // as the client declared it, or -1
	read          int64 // bytes read
	needsContinue bool  // the first read sends 100 Continue
}

// Read reads the client's request body. At its end, the request's Trailer
// holds the trailers the client declared. Once the client has gone, or the
// handler has closed the body, it fails: once the client has gone, with
// the stream error of the client's reset. It gives no more than the length
// the client declared, and fails at an end that comes before it, as
// net/http's client and server see to. Without a body, it returns io.EOF
// each time.
func (b *requestBody) Read(p []byte) (int, error) {
	ex := b.ex
	if b.src == nil {
		// No body: io.EOF at every read, whatever became of the
		// exchange, as net/http's server's; the first still sends 100
		// Continue if the client asked for it.
		if b.needsContinue {
			b.needsContinue = false
			ex.sendContinue()
		}
		return 0, io.EOF
	}
	ex.mu.Lock()
	err := ex.inEnd
	switch {
	case err != nil:
	case ex.writeEnd == io.EOF:
		// The handler returned, its response whole, before the client
		// ended its side (handlerDone has yet to say so): net/http's
		// server reset the stream first, with NO_ERROR.
		err = errReadAfterReturn
	case ex.readEnd != nil:
		err = clientReset(ex.readEnd)
	}
	ex.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if b.needsContinue {
		b.needsContinue = false
		ex.sendContinue()
	}
	if left := b.length - b.read; b.length >= 0 && int64(len(p)) > left {
		p = p[:left+1] // a byte more tells a body longer than declared
	}
	n, err := b.src.Read(p)
	b.read += int64(n)
	if b.length >= 0 && b.read > b.length {
		// net/http's client sends none of what it read beyond the
		// length, fails, and resets the stream.
		return 0, ex.inFailed(errBodyTooLong)
	}
	if err == io.EOF {
		// net/http's client ends the stream with the trailers, which
		// it sends only within the server's limit; over it, it fails
		// and resets the stream.
		if tooLarge := ex.t.requestTrailersTooLarge(ex.creq.Trailer); tooLarge != nil {
			return n, ex.inFailed(tooLarge)
		}
		// The client has written its request whole, whatever the
		// server makes of it.
		ex.wroteRequest(nil)
		if key := refusedTrailer(ex.sreq.Trailer, ex.creq.Trailer); key != "" {
			return n, ex.refuseTrailers(key)
		}
	}
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF && b.length >= 0 && b.read < b.length:
		// net/http's client ends the stream there, without an error,
		// and its server fails the handler's read.
		return n, ex.inEndWith(fmt.Errorf("inprochttp: request declared a Content-Length of %d but only wrote %d bytes", b.length, b.read))
	case err == io.EOF:
		return n, ex.inEndWith(io.EOF)
	}
	return n, ex.inFailed(err)
}

// refusedTrailer is a key of the client's trailers sent that may not be
// a trailer (httpguts.ValidTrailerHeader), the least if there are
// several, or "" if there is none. net/http's client sends a field for
// each value; its server checks them only if the request declared
// trailers (declared is not nil).
func refusedTrailer(declared, sent http.Header) string {
	if declared == nil {
		return ""
	}
	refused := ""
	for k, vv := range sent {
		if len(vv) > 0 && !httpguts.ValidTrailerHeader(k) && (refused == "" || k < refused) {
			refused = k
		}
	}
	return refused
}

// refuseTrailers ends the exchange as net/http's server resets a stream
// whose trailers hold key, which may not be a trailer (PROTOCOL_ERROR),
// and returns what the handler's read gets. The handler's read of the
// body's end fails with the stream error, its trailers keep no value,
// its context ends, and its writes fail. The client gets the stream
// error, as net/http's does unless it can send the request again
// (GetBody), which it then does until its context ends.
func (ex *exchange) refuseTrailers(key string) error {
	why := fmt.Sprintf("the client's trailers hold %q, which may not be a trailer", key)
	ex.reset(newStreamError(errCodeProtocol, why, errFromPeer), newStreamError(errCodeProtocol, why, nil), errStreamClosed)
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.inEnd
}

// Close ends the request body for the handler; later reads fail with
// errClosedByHandler, and the client's body is closed. After the body's
// end, later reads return io.EOF still, as net/http's server's do.
// Without a body, it does nothing.
func (b *requestBody) Close() error {
	ex := b.ex
	if b.src == nil {
		return nil // no body: nothing to end
	}
	ex.mu.Lock()
	if ex.inEnd != io.EOF {
		ex.inEnd = errClosedByHandler
	}
	ex.mu.Unlock()
	ex.closeIn(errClosedByHandler)
	return nil
}

// inEndWith ends the request body with why, io.EOF at its end, and
// returns how it ended: at the end, the trailers the client declared take
// their values. An end that came first stands: a read the read deadline
// (or the handler's Close) cut short ends as that did, not as the
// client's body then says, which may be a clean io.EOF. The client's body
// is closed, as net/http's client closes it once sent.
func (ex *exchange) inEndWith(why error) error {
	ex.mu.Lock()
	if ex.inEnd != nil {
		why = ex.inEnd
	} else {
		ex.inEnd = why
		for k, vv := range ex.creq.Trailer {
			k = http.CanonicalHeaderKey(k)
			if _, declared := ex.sreq.Trailer[k]; declared && len(vv) > 0 && why == io.EOF {
				ex.sreq.Trailer[k] = slices.Clone(vv)
			}
		}
	}
	ex.mu.Unlock()
	ex.closeIn(why)
	return why
}

// inFailed returns what the handler's read returns when reading the
// client's body failed with err. Unless the exchange closed the body, the
// client's body broke: as net/http's client resets the stream then, the
// exchange ends, the client gets err, and the handler a stream error.
func (ex *exchange) inFailed(err error) error {
	ex.mu.Lock()
	closed, end, readEnd := ex.inClosed, ex.inEnd, ex.readEnd
	ex.mu.Unlock()
	switch {
	case !closed:
		ex.clientEnd(err, err)
		return clientReset(err)
	case end != nil:
		return end
	case readEnd != nil:
		return clientReset(readEnd)
	}
	return err
}
