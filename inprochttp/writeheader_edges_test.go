package inprochttp_test

import (
	"io"
	"net/http"
	"reflect"
	"testing"
)

// writeHeaderCases are uses and misuses of WriteHeader whose exchanges
// must look the same in-process as over a socket.
var writeHeaderCases = []exchangeCase{
	{
		// net/http checks the code only while the head is still to be
		// written: once it is, a later WriteHeader is ignored, whatever
		// its code, and the response goes on.
		name: "invalid-code-after-head-0",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "ok")
			w.WriteHeader(0)
			io.WriteString(w, ", still")
		},
	},
	{
		name: "invalid-code-after-head-1000",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
			w.WriteHeader(1000)
		},
	},
	{
		// A 1xx response never carries the final response's framing:
		// net/http leaves Content-Length (and Transfer-Encoding) out of it.
		name: "informational-without-content-length",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "2")
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "ok")
		},
	},
	{
		// net/http's server sends a 1xx head's fields as the handler
		// set them, Connection and the other connection-specific ones
		// included, but for Content-Length and Transfer-Encoding.
		name: "informational-connection-specific-fields",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			setConnectionFields(w.Header())
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "ok")
		},
	},
	// Cases that hold: pinned.
	{
		name: "twice",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusCreated)
			w.WriteHeader(http.StatusAccepted) // ignored
			io.WriteString(w, "created")
		},
	},
	{
		name: "informational-after-final",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusOK)
			w.WriteHeader(http.StatusEarlyHints) // ignored
			io.WriteString(w, "x")
		},
	},
	{
		name: "continue-explicit",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusContinue)
			io.WriteString(w, "x")
		},
	},
	{
		name: "switching-protocols",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusSwitchingProtocols) // informational in HTTP/2
			io.WriteString(w, "x")
		},
	},
	{
		name: "many-informational",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			for range 10 {
				w.WriteHeader(http.StatusEarlyHints)
			}
			io.WriteString(w, "x")
		},
	},
	{
		name: "code-999",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(999)
		},
	},
	{
		name: "code-600-with-body",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(600)
			io.WriteString(w, "x")
		},
	},
	{
		name: "invalid-code-first",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(99) // panics on both: a reset
		},
	},
	{
		name: "no-content-write",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.WriteHeader(http.StatusNoContent)
			n, err := io.WriteString(w, "x")
			saw("write", n == 0 && err == http.ErrBodyNotAllowed)
			w.(http.Flusher).Flush()
		},
	},
}

// TestWriteHeaderEdges runs each of writeHeaderCases in-process and over
// a unix socket to net/http's HTTP/2 server, and compares.
func TestWriteHeaderEdges(t *testing.T) {
	for _, c := range writeHeaderCases {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, transports[0], c)
			want := run(t, transports[1], c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("in-process and net/http differ:\n%s", diff(got, want))
			}
		})
	}
}
