package inprochttp

import (
	"errors"
	"fmt"
	"net/http"
)

var (
	// errBodyClosed is what the client's reads return once it closed the
	// response body.
	errBodyClosed = errors.New("inprochttp: read on closed response body")
	// errClientClosed is the cause of the handler's context when the
	// client closed the response body before its end.
	errClientClosed = errors.New("inprochttp: the client closed the response body")
	// errTooLong is what the client's read returns of a body longer than
	// its Content-Length.
	errTooLong = errors.New("inprochttp: the handler wrote more than the declared Content-Length; truncated")
	// errHeadDone is the cause of the handler's context when the client
	// has the head of its HEAD response and wants no more.
	errHeadDone = errors.New("inprochttp: the client has the head of its HEAD response")
	// errBodyTooLong is what the client gets when its request body is
	// longer than its ContentLength, as net/http's client refuses to
	// send it.
	errBodyTooLong = errors.New("inprochttp: request body larger than specified content length")
	// errHandlerReturned is what writes return once ServeHTTP has
	// returned.
	errHandlerReturned = errors.New("inprochttp: write after the handler returned")
)

// goneError is what the handler's writes and reads return once the client
// has gone for why: its context's error, its closing of the body, or its
// request body's failure.
func goneError(why error) error {
	if why == errBodyClosed {
		why = errClientClosed
	}
	return fmt.Errorf("inprochttp: the client ended the exchange: %w", why)
}

// A resetError is what the client gets when the handler panicked or its
// write deadline passed: as net/http's HTTP/2 server resets the stream
// with INTERNAL_ERROR then, its
// words are those of the error an HTTP/2 client reports for that reset,
// so that clients that classify resets by them (connect-go: CodeInternal)
// classify this one alike.
type resetError struct {
	why   string
	cause error // http.ErrAbortHandler, os.ErrDeadlineExceeded, or nil
}

// newResetError is the resetError of a handler that panicked with p; p is
// nil if it called runtime.Goexit.
func newResetError(p any) *resetError {
	switch p {
	case nil:
		return &resetError{why: "the handler's goroutine exited"}
	case http.ErrAbortHandler:
		return &resetError{why: "the handler aborted the response", cause: http.ErrAbortHandler}
	}
	return &resetError{why: "the handler panicked"}
}

func (e *resetError) Error() string {
	return "stream error: inprochttp: " + e.why + "; INTERNAL_ERROR; received from peer"
}

func (e *resetError) Unwrap() error { return e.cause }
