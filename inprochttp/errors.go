package inprochttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
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
	// errHandlerPanicked is what the handler's writes and reads of the
	// request body return once it panicked, from goroutines it left,
	// as net/http's server's do.
	errHandlerPanicked = errors.New("inprochttp: the handler panicked")
	// errFromPeer is a streamError's cause when the other end reset
	// the stream, as net/http's client reports a reset it receives.
	errFromPeer = errors.New("received from peer")
	// errWroteTooMuch is what the handler's writes past the
	// Content-Length its head declared return. Like net/http's, it is
	// no http.ErrContentLength, which net/http's HTTP/1 writer returns.
	errWroteTooMuch = errors.New("inprochttp: handler wrote more than declared Content-Length")
	// errClosedByHandler is what the handler's reads of the request body
	// return once it closed it, as net/http's HTTP/2 server's do: no
	// http.ErrBodyReadAfterClose, which its HTTP/1 server returns.
	errClosedByHandler = errors.New("inprochttp: body closed by handler")
	// errReadAfterReturn is what reads of the request body return once
	// the handler returned without reading its end: the stream error
	// (NO_ERROR) of the reset with which net/http's server tells the
	// client it wants no more. Made once: every such exchange has it.
	errReadAfterReturn error = newStreamError(errCodeNo, "the handler returned", nil)
	// errStreamClosed is what a push returns once the response has
	// ended, and what writes return once the server refused the
	// client's trailers, as net/http's do.
	errStreamClosed = errors.New("inprochttp: stream closed")
	// errClientDisconnected is what the handler's reads of the request
	// body return once the client failed its connection, as net/http's
	// server's do once it is gone.
	errClientDisconnected = errors.New("inprochttp: client disconnected")
)

// canceled is the cause of the handler's context when the exchange ended
// for why, which is not the client's context's end: errors.Is finds
// context.Canceled in it, as net/http's server cancels a stream's
// context whatever ended the stream. Like net/http's, it holds nothing
// else errors.Is or errors.As could find: why is only in its words.
type canceled struct{ why error }

func (c *canceled) Error() string { return "context canceled: " + c.why.Error() }

func (c *canceled) Unwrap() error { return context.Canceled }

// goneError is what the handler's writes return once the client has gone
// for why: its context's error, its closing of the body, or its request
// body's failure. Like net/http's ("http2: stream closed"), it wraps
// none of these: why is only in its words.
func goneError(why error) error {
	if why == errBodyClosed {
		why = errClientClosed
	}
	return fmt.Errorf("inprochttp: the client ended the exchange: %v", why)
}

// An errCode is an HTTP/2 error code (RFC 9113, section 7), which a
// stream or connection error carries.
type errCode uint32

const (
	errCodeNo          errCode = 0x0
	errCodeProtocol    errCode = 0x1
	errCodeInternal    errCode = 0x2
	errCodeCancel      errCode = 0x8
	errCodeCompression errCode = 0x9
)

// String is the code's name in RFC 9113, as net/http says it.
func (c errCode) String() string {
	switch c {
	case errCodeNo:
		return "NO_ERROR"
	case errCodeProtocol:
		return "PROTOCOL_ERROR"
	case errCodeInternal:
		return "INTERNAL_ERROR"
	case errCodeCancel:
		return "CANCEL"
	case errCodeCompression:
		return "COMPRESSION_ERROR"
	}
	return "ERR_UNKNOWN_" + strconv.FormatUint(uint64(c), 10)
}

// A streamError is an HTTP/2 stream error: what net/http's HTTP/2 client
// and server report of a stream's reset. Its fields are those of
// golang.org/x/net/http2's StreamError, and its As method is net/http's,
// so that errors.As finds an http2.StreamError in it, with its Code, as
// it does in net/http's. Importing x/net/http2 to return its type would
// link its HTTP/2 client and server into every program that imports this
// package; net/http, which bundles its own copy, does the same. StreamID is 0, as no connection numbers
// streams here. Cause is a *streamCause. Like net/http's, a streamError
// has no Unwrap method: errors.Is finds nothing in it.
type streamError struct {
	StreamID uint32
	Code     errCode
	Cause    error
}

// A streamCause is why a stream was reset, in inprochttp's words, with
// the cause net/http's error names: errFromPeer for a reset the other
// end sent, else what failed, or nil.
type streamCause struct {
	why   string
	cause error
}

// newStreamError is the stream error of a reset with code, for why, with
// cause.
func newStreamError(code errCode, why string, cause error) streamError {
	return streamError{Code: code, Cause: &streamCause{why, cause}}
}

// Error says the error as net/http does, with why in place of the
// stream's ID: clients that classify resets by their words (connect-go:
// a prefix "stream error: ", the code, a suffix "; received from peer")
// classify these alike.
func (e streamError) Error() string {
	c, _ := e.Cause.(*streamCause)
	if c == nil {
		c = &streamCause{}
	}
	msg := "stream error: inprochttp: " + c.why + "; " + e.Code.String()
	if c.cause != nil {
		msg += "; " + c.cause.Error()
	}
	return msg
}

// As sets target to e if target points to a struct with e's fields, by
// name, of types e's convert to, as net/http's http2StreamError.As does:
// that is how errors.As finds a golang.org/x/net/http2.StreamError in it.
func (e streamError) As(target any) bool {
	dst := reflect.ValueOf(target).Elem()
	dstType := dst.Type()
	if dstType.Kind() != reflect.Struct {
		return false
	}
	src := reflect.ValueOf(e)
	srcType := src.Type()
	numField := srcType.NumField()
	if dstType.NumField() != numField {
		return false
	}
	for i := range numField {
		sf, df := srcType.Field(i), dstType.Field(i)
		if sf.Name != df.Name || !sf.Type.ConvertibleTo(df.Type) {
			return false
		}
	}
	for i := range numField {
		df := dst.Field(i)
		df.Set(src.Field(i).Convert(df.Type()))
	}
	return true
}

// Error is why, and the cause if there is one.
func (c *streamCause) Error() string {
	if c.cause == nil {
		return "inprochttp: " + c.why
	}
	return "inprochttp: " + c.why + "; " + c.cause.Error()
}

// Unwrap is the cause, which errors.Is finds in the Cause of the
// http2.StreamError errors.As makes of a streamError, as it finds
// net/http's cause there.
func (c *streamCause) Unwrap() error { return c.cause }

// panicReset is what the client gets of a handler that panicked with p
// (nil if it called runtime.Goexit), as net/http's HTTP/2 server resets
// the stream with INTERNAL_ERROR then.
func panicReset(p any) error {
	why := "the handler panicked"
	switch p {
	case nil:
		why = "the handler's goroutine exited"
	case http.ErrAbortHandler:
		why = "the handler aborted the response"
	}
	return newStreamError(errCodeInternal, why, errFromPeer)
}

// A connError is an HTTP/2 connection error, which net/http's client
// fails its connection with. net/http exports no type for it, and
// errors.As finds no x/net http2.ConnectionError in it: its words,
// "connection error" and the code, are all a program can test, and
// this one's say them.
type connError struct {
	code errCode
	why  string
}

func (e *connError) Error() string {
	return "connection error: inprochttp: " + e.why + "; " + e.code.String()
}

// clientReset is what the handler's reads of the request body return
// once the client ended its side with err, as net/http's server reads the
// client's RST_STREAM: a stream error with the code the client resets
// with, its own stream error's, else CANCEL. Its cause is nil, as a
// reset carries none: err is only in its words. A client that failed its
// connection sent no reset, and the connection is gone.
func clientReset(err error) error {
	code := errCodeCancel
	switch e := err.(type) {
	case streamError:
		code = e.Code
	case *connError:
		return errClientDisconnected
	}
	return newStreamError(code, "the client reset the stream: "+err.Error(), nil)
}
