package inprochttp

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"time"
)

// An exchange is one request and its response, between the client, which
// called RoundTrip and reads the response's body, and the handler, which
// runs on a goroutine of its own (serve) and writes the response into a
// bounded window that the client reads. The handler reads the client's
// request body itself, as the client writes it.
//
// Its lifecycle is four named signals, each set once under mu (but inEnd,
// which the handler's Close may set after the body's end), and
// broadcast on cond with every other change a goroutine may wait for:
//
//   - sent: the response's head is ready, so RoundTrip returns it;
//   - writeEnd: the handler's response is over: io.EOF once ServeHTTP
//     returned, the client's stream error if it panicked or its write
//     deadline passed (then the handler may still run, its writes
//     failing with closeErr);
//   - readEnd: the client is done reading: io.EOF once it read the end,
//     its context's error once that ended, errBodyClosed once it closed
//     the body;
//   - inEnd: the handler is done with the request body: io.EOF at its end,
//     errClosedByHandler once the handler closed it, errReadAfterReturn
//     at its return.
//
// The exchange ends when writeEnd and readEnd are both set. The handler's
// context ends with the first of them; the client's request body is closed
// once, when the handler is done with it or the client with the exchange.
type exchange struct {
	// Each group's booleans sit together, next to another's, so that they
	// pack: every request allocates an exchange, and 8 bytes more move it
	// up an allocation size class.
	mu   sync.Mutex
	cond sync.Cond // on mu: RoundTrip waits for the head, Read for bytes or an end, Write for room

	// Set by newExchange, and read-only after.
	t       *transport
	handler http.Handler  // t's, or net/http's answer to a request it refuses
	creq    *http.Request // the client's request
	sreq    *http.Request // the handler's
	// cancel and cancelDeadline end the handler's context.
	cancel         context.CancelCauseFunc
	cancelDeadline context.CancelFunc
	writer         responseWriter // the handler's http.ResponseWriter
	body           responseBody   // the client's Response.Body
	in             requestBody    // the handler's Request.Body
	head           bool           // the request is HEAD: the body is discarded
	// hasDeadline: the client's context has a deadline, which the
	// handler's carries.
	hasDeadline bool
	// traced: the client's context has an httptrace.ClientTrace (see
	// trace.go).
	traced bool

	// The lifecycle, under mu.
	sent     bool
	inClosed bool // the client's request body was closed
	// informed: a 1xx head was written, so no 100 Continue follows.
	informed bool
	// wrote: the client's trace was told of the request's writing;
	// firstByte: of the response's first byte.
	wrote, firstByte bool
	writeEnd         error
	readEnd          error
	inEnd            error
	// closeErr is what the handler's writes fail with once a reset set
	// writeEnd, as net/http's server fails them with its stream's.
	closeErr error
	// stopWatch stops the watch on the client's context, which ends the
	// exchange when that does; nil if it never ends. Under mu, as the
	// watch may fire as it is set.
	stopWatch func() bool
	// deadlines are the handler's, nil until it sets one.
	deadlines *deadlines
	// informationalSize is what HTTP/2 counts of the 1xx heads sent so
	// far.
	informationalSize int64

	// The response's head, set on the handler's goroutine before it is
	// sent; the client reads it after.
	status   int         // 0 until the handler writes the head
	header   http.Header // the client's copy
	spare    []string    // values for what sendHeadLocked adds to header
	declared []string    // the trailers the handler's "Trailer" field declares
	// length is the Content-Length the server sends, or -1 if none: the
	// handler's writes go no further. The client reads its own of the
	// head, which may hold others (see leftOut).
	length  int64
	written int64       // bytes of body the handler wrote, refused ones too
	trailer http.Header // set with writeEnd io.EOF
	sniff   bool        // Content-Type is to be detected from the body
	dated   bool        // the handler's header has a Date key: net/http's server adds none
	ended   bool        // the head was sent at the end: no body, no trailers
	// uncounted: the handler's Content-Length has an empty first value,
	// which net/http's server sends as it is, and counts no length.
	uncounted bool

	// The client's: its response, and how many bytes of its body are
	// left to read if its length is known, or -1.
	resp   *http.Response
	remain int64

	// win holds the response's body on its way from the handler to the
	// client, under mu.
	win window
}

const (
	// windowSize is how many response bytes may wait for the client
	// before the handler's writes wait for it to read.
	windowSize = 256 << 10
	// chunkSize is how many bytes the handler writes before they go to
	// the client unflushed, as net/http's HTTP/2 server buffers them.
	chunkSize = 4 << 10
)

// newExchange returns the exchange of the client's request creq, with the
// handler's request, or why there can be none.
func newExchange(t *transport, creq *http.Request) (*exchange, error) {
	ex := &exchange{t: t, handler: t.handler, creq: creq, length: -1}
	var sreq http.Request
	arrived, err := serverRequest(creq, &sreq, t.maxRequestList, t.maxHeaderBytes)
	if err != nil {
		return nil, err
	}
	switch {
	case arrived.refused != nil:
		ex.handler = badRequest(arrived.refused)
	case sreq.RequestURI == "*" && sreq.Method == http.MethodOptions:
		ex.handler = globalOptions
	}
	cctx := creq.Context()
	if err := cctx.Err(); err != nil {
		return nil, err // as over a socket, nothing is sent
	}
	ex.head = sreq.Method == http.MethodHead
	ex.cond.L = &ex.mu
	ex.writer.ex = ex
	ex.body.ex = ex
	ctx, cancel := context.WithCancelCause(t.base)
	ex.cancel = cancel
	if d, ok := cctx.Deadline(); ok {
		ex.hasDeadline = true
		ctx, ex.cancelDeadline = context.WithDeadline(ctx, d)
	}
	// A request without a body has one too, which reads none, as on
	// net/http's server.
	ex.in = requestBody{ex: ex, length: sreq.ContentLength, needsContinue: arrived.needsContinue}
	if hasBody(creq) {
		ex.in.src = creq.Body
	}
	sreq.Body = &ex.in
	ex.sreq = sreq.WithContext(ctx)
	if trace := httptrace.ContextClientTrace(cctx); trace != nil {
		ex.traced = true
		ex.traceRequestHead(trace, creq, ex.sreq)
	}
	if cctx.Done() != nil {
		ex.mu.Lock()
		ex.stopWatch = context.AfterFunc(cctx, func() { ex.clientEnd(cctx.Err(), cctx.Err()) })
		ex.mu.Unlock()
	}
	return ex, nil
}

// serve runs the handler and ends its side of the exchange, however it
// ends, with what the handler left behind: the files of the multipart
// form it parsed.
func (ex *exchange) serve() {
	growStack()
	returned := false
	defer func() {
		if f := ex.sreq.MultipartForm; f != nil {
			// net/http's server removes the files of a form the
			// handler parsed, before it ends the response.
			f.RemoveAll()
		}
		if returned {
			ex.finish()
			return
		}
		p := recover() // nil if the goroutine exited (runtime.Goexit)
		ex.t.logPanic(ex.sreq, p)
		ex.abort(panicReset(p))
	}()
	ex.handler.ServeHTTP(&ex.writer, ex.sreq)
	returned = true
}

// badRequest is what net/http's HTTP/2 server serves in place of the
// handler to a request it refuses for why.
func badRequest(why error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, why.Error(), http.StatusBadRequest)
	})
}

// globalOptions is what net/http's server serves in place of the handler
// to "OPTIONS *" (unless its DisableGeneralOptionsHandler, which the
// transport does not read): 200 with Content-Length 0, having read up to
// 4 KiB of the body, reserved for future use.
var globalOptions http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "0")
	if r.ContentLength != 0 {
		io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 4<<10))
	}
})

// response waits for the response's head, or for the reason there will be
// none, and returns it, as net/http's HTTP/2 client makes it of the head.
func (ex *exchange) response() (*http.Response, error) {
	ex.mu.Lock()
	for !ex.sent && ex.writeEnd == nil && ex.readEnd == nil {
		ex.cond.Wait()
	}
	var headErr error
	if ex.sent && ex.readEnd == nil {
		headErr = ex.headErrLocked()
		if ex.firstByteLocked(headErr) {
			// net/http's client tells the trace as the head comes,
			// before it reads it.
			ex.mu.Unlock()
			ex.traceFirstByte()
			ex.mu.Lock()
		}
	}
	if err := ex.clientCtxErr(); ex.readEnd == nil && err != nil {
		// Its context ended as the head came: the client gets its
		// context's error, as it would a moment later.
		ex.mu.Unlock()
		ex.clientEnd(err, err)
		ex.mu.Lock()
	}
	if ex.readEnd != nil || !ex.sent {
		// The client's end comes first: the head may have come after it.
		err := ex.readEnd
		if err == nil {
			err = ex.writeEnd
		}
		ex.mu.Unlock()
		ex.stopWatching()
		return nil, err
	}
	if headErr != nil {
		// net/http's client resets the stream, or fails its
		// connection, and RoundTrip fails.
		ex.mu.Unlock()
		ex.clientEnd(headErr, headErr)
		return nil, headErr
	}
	resp := &http.Response{
		Status:        statusLine(ex.status),
		StatusCode:    ex.status,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        ex.header,
		Body:          &ex.body,
		ContentLength: -1,
		Request:       ex.creq,
	}
	if t, ok := ex.header["Trailer"]; ok {
		// The client sees its keys in Response.Trailer, those of its
		// values under every key the handler set in every case.
		delete(ex.header, "Trailer")
		declared := declaredTrailers(t)
		resp.Trailer = make(http.Header, len(declared))
		for _, k := range declared {
			resp.Trailer[k] = nil
		}
	}
	// As net/http's client, which knows a length only from one value.
	switch cl := ex.header["Content-Length"]; {
	case len(cl) == 1:
		if n, err := strconv.ParseUint(cl[0], 10, 63); err == nil {
			resp.ContentLength = int64(n)
		}
	case len(cl) == 0 && ex.ended && !ex.head:
		resp.ContentLength = 0
	}
	ex.resp, ex.remain = resp, resp.ContentLength
	if ex.head || (ex.ended && resp.ContentLength <= 0) {
		// Nothing follows the head.
		resp.Body = http.NoBody
		ex.readEnd = io.EOF
		done := ex.writeEnd != nil
		ex.mu.Unlock()
		if done {
			ex.stopWatching()
		} else {
			// A HEAD whose handler runs on: net/http's client resets
			// the stream once it has the head, which ends the
			// handler's context and its request body.
			ex.endContext(errHeadDone)
			ex.closeIn(errHeadDone)
		}
		return resp, nil
	}
	ex.mu.Unlock()
	return resp, nil
}

// headErrLocked is why the client refuses the response's head, which it
// reads as it came, the "Trailer" field in it: it is over the client's
// limit. nil if it is not.
func (ex *exchange) headErrLocked() error {
	h := ex.header
	size := fieldSize(":status", 3) + headerListSize(h, false)
	if !ex.dated {
		// net/http's server adds a Date to a head without one, last,
		// which its client counts; this transport sends none, but
		// counts it so that a head refused over a socket is refused here.
		size += fieldSize("date", len(http.TimeFormat))
	}
	if size <= ex.t.maxResponseList {
		return nil
	}
	// net/http's server sends Content-Length after the other fields,
	// and a detected Content-Type before it.
	last := []string{"Content-Length"}
	if ex.sniff {
		last = []string{"Content-Type", "Content-Length"}
	}
	if !ex.dated {
		h = h.Clone()
		h["Date"] = []string{http.TimeFormat}
		last = append(last, "Date")
	}
	return ex.t.headTooLarge("response header list", ex.status, h, size, last...)
}

// clientCtxErr is the error of the client's context if it has ended, or
// context.DeadlineExceeded if its deadline has passed by the clock, its
// timer yet to fire. In-process the handler's context carries that
// deadline, and may end, and the handler answer, before the client's
// context does. Over a socket the handler cannot know the deadline, and
// net/http's client sees its context end before any answer to it.
func (ex *exchange) clientCtxErr() error {
	if err := ex.creq.Context().Err(); err != nil {
		return err
	}
	if ex.pastDeadline() {
		return context.DeadlineExceeded
	}
	return nil
}

// pastDeadline reports whether the client's deadline has passed by the
// clock: the handler's context may have ended with it. The deadline is
// read from the context, not kept: most requests have none.
func (ex *exchange) pastDeadline() bool {
	if !ex.hasDeadline {
		return false
	}
	d, _ := ex.creq.Context().Deadline()
	return !time.Now().Before(d)
}

// finish ends the handler's side once ServeHTTP has returned: the head
// goes if it has not, then every byte written and the trailers. The
// writer's methods panic from now on.
func (ex *exchange) finish() {
	ex.writer.finished.Store(true)
	ex.mu.Lock()
	if ex.writeEnd != nil { // reset as the handler ran
		ex.mu.Unlock()
		ex.handlerDone()
		return
	}
	if ex.status == 0 {
		ex.writeHeaderLocked(http.StatusOK)
	}
	ex.trailer = ex.t.trailers(ex.writer.h, ex.declared)
	ex.endWriteLocked(io.EOF)
	ex.flushLocked()
	ex.mu.Unlock()
	ex.handlerDone()
}

// abort ends the handler's side with the client's error clientErr once
// it has panicked, as a stream reset; what it left running fails to read
// and write, as on net/http.
func (ex *exchange) abort(clientErr error) {
	ex.reset(clientErr, errHandlerPanicked, errHandlerPanicked)
	ex.handlerDone()
}

// reset ends the handler's response, as net/http's server resets the
// stream, whether or not the handler has returned: what it wrote but did
// not flush is lost, the client gets clientErr once it has read the rest,
// and the handler's context ends; its reads of the request body fail
// with readErr and its writes with writeErr.
func (ex *exchange) reset(clientErr, readErr, writeErr error) {
	ex.mu.Lock()
	if ex.writeEnd != nil {
		ex.mu.Unlock()
		return
	}
	ex.closeErr = writeErr
	ex.endWriteLocked(clientErr)
	if ex.inEnd == nil {
		ex.inEnd = readErr
	}
	ex.mu.Unlock()
	ex.endContext(clientErr)
	ex.closeIn(clientErr)
}

// endWriteLocked sets writeEnd: the handler's deadlines, which only
// bound its response, stop with it.
func (ex *exchange) endWriteLocked(err error) {
	ex.writeEnd = err
	ex.stopDeadlinesLocked()
	ex.cond.Broadcast()
}

// handlerDone ends what the handler leaves once it has returned: its
// context (as net/http's does) and the request body.
func (ex *exchange) handlerDone() {
	ex.endContext(nil)
	ex.mu.Lock()
	if ex.inEnd == nil {
		ex.inEnd = errReadAfterReturn
	}
	clientDone := ex.readEnd != nil
	ex.mu.Unlock()
	ex.closeIn(errReadAfterReturn)
	if clientDone {
		ex.stopWatching()
	}
}

// clientEnd ends the client's side before it has read the end, with
// readErr for its reads and cause for the handler's context, as an HTTP/2
// client resets its stream: the handler's context ends, and so do its
// writes and its reads of the request body.
func (ex *exchange) clientEnd(readErr, cause error) {
	ex.mu.Lock()
	if ex.readEnd == nil {
		ex.readEnd = readErr
		ex.win.drop()
		ex.cond.Broadcast()
	}
	handlerRunning := ex.writeEnd == nil
	ex.mu.Unlock()
	if handlerRunning {
		ex.endContext(cause)
	}
	ex.closeIn(readErr)
	ex.stopWatching()
}

// endContext ends the handler's context for why: nil if the handler
// returned, the client's context's error if that ended, else what ended
// the exchange. The context's cause is context.Canceled, as net/http's
// server cancels a stream's context however it ends, with why in its
// words; or the client's context's DeadlineExceeded, which the handler's
// context carries.
func (ex *exchange) endContext(why error) {
	cause := why
	switch why {
	case nil, context.Canceled, context.DeadlineExceeded:
	default:
		cause = &canceled{why}
	}
	ex.cancel(cause)
	if ex.cancelDeadline != nil {
		ex.cancelDeadline()
	}
}

// closeIn closes the client's request body, once, as the exchange is
// done with it for why; the client's trace is told that the request was
// not written whole for why, unless it was told it was.
func (ex *exchange) closeIn(why error) {
	if !hasBody(ex.creq) {
		return
	}
	ex.mu.Lock()
	closed := ex.inClosed
	ex.inClosed = true
	ex.mu.Unlock()
	if !closed {
		ex.wroteRequest(why)
		ex.creq.Body.Close()
	}
}

// stopWatching stops the watch on the client's context.
func (ex *exchange) stopWatching() {
	ex.mu.Lock()
	stop := ex.stopWatch
	ex.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// deliverTrailersLocked sets the response's trailers to trailer, what
// the client takes of the handler's, as the client reads the end of its
// body.
func (ex *exchange) deliverTrailersLocked(trailer http.Header) {
	switch {
	case len(trailer) == 0:
	case ex.resp.Trailer == nil:
		ex.resp.Trailer = trailer // no one else has it
	default:
		maps.Copy(ex.resp.Trailer, trailer)
	}
}
