package inproc

import "context"

// An executor is where a Channel's handlers run (see Execution), chosen
// once, in New. It runs unary calls and makes each stream with the runner
// that runs its handler; the stream's files and unary.go only call it, so
// that a mode of execution is one file: isolated.go, inline.go.
type executor interface {
	// invoke starts u's handler, with its context following ctx, and
	// returns its result (u.result) or why the client stopped waiting.
	// A pointer, as the result is most often u's own: copied back through
	// every return, it cost more than the pointer.
	invoke(ctx context.Context, u *unaryCall) *unaryResult
	// newStream allocates a stream together with its runner.
	newStream() *stream
}

// A runner runs one stream's handler and is how the stream's two sides
// wait for each other.
type runner interface {
	// start starts the handler: on its own, or ready to be driven.
	start()
	// clientWait and handlerWait are how the client and the handler wait
	// on q until n may be satisfied (first on a call's first wait); false
	// if the call ended first.
	clientWait(q *queue, n need, first bool) bool
	handlerWait(q *queue, n need, first bool) bool
	// handed tells that the handler gave what a waiting client may want;
	// false if the call ended while the handler was suspended after it.
	handed(got want) bool
	// fed tells that the client gave the handler input.
	fed()
	// awaitHeader does what the header needs to go out, if anything
	// does, before the client waits for it.
	awaitHeader() error
	// abandon ends a handler whose client left before it returned.
	abandon()
	// refused tells that the client refused a message it took (over its
	// receive limit, say) and leaves: a handler the client drives goes on
	// until it would wait, as a socket's server, which does not wait for
	// its client, runs on (to its return and trailer, often).
	refused()
}

// want is what a handler just gave, and what a client that waits for it
// waits for.
type want uint8

const (
	wantProgress want = iota // anything: another of the client's goroutines waits
	wantMessage              // a message or the end, in toClient
	wantRoom                 // room in toServer
	wantHeader               // the header
)

// executorFor is e's executor. Executors are pointers, so that calling
// one through the interface needs no wrapper to copy it.
func executorFor(e Execution) executor {
	if e == Inline {
		return &inlineExecutor{}
	}
	return &isolatedExecutor{}
}
