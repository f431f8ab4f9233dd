// Package goroutine tells goroutines apart: Current identifies the running
// goroutine among those alive, which an Inline stream needs to know
// whether its handler's coroutine or another goroutine of the handler is
// using the stream.
package goroutine
