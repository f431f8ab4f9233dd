package inprochttp_test

import (
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// contentLengthCases are responses whose Content-Length, declared or
// counted, must reach the client as net/http's HTTP/2 server sends it.
var contentLengthCases = []exchangeCase{
	{
		// net/http buffers 4 KiB in a bufio.Writer, which sends a chunk
		// only once a write does not fit: 4096 bytes fit, so the head
		// waits for the handler's return and carries the length.
		name: "exactly-4KiB-one-write",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, strings.Repeat("a", 4096))
		},
	},
	{
		name: "exactly-4KiB-four-writes",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			for range 4 {
				io.WriteString(w, strings.Repeat("a", 1024))
			}
		},
	},
	{
		name: "head-exactly-4KiB",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodHead, base+"/x", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, strings.Repeat("a", 4096))
		},
	},
	{
		// Two values: net/http's server sends the first.
		name: "declared-twice",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["Content-Length"] = []string{"5", "7"}
			io.WriteString(w, "hello")
			w.(http.Flusher).Flush()
		},
	},
	{
		// net/http's HTTP/2 writer takes a declared 0 for no length
		// (sentContentLen != 0 guards its check), so the write goes
		// through; its client, which trusts the 0, fails the read.
		name: "zero-declared-then-write-after-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "0")
			w.(http.Flusher).Flush()
			n, err := io.WriteString(w, "hello")
			saw("write", fmt.Sprint(n, " ", errorClass(err)))
		},
	},
	{
		name: "zero-declared-then-write-before-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "0")
			n, err := io.WriteString(w, "hello")
			saw("write", fmt.Sprint(n, " ", errorClass(err)))
			w.(http.Flusher).Flush()
		},
	},
	{
		// net/http counts the bytes of a write it refuses: once over
		// the length, every later write fails, a short one too.
		name: "more-than-declared-in-writes-after-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "5")
			w.(http.Flusher).Flush()
			for _, s := range []string{"abc", "defgh", "d", ""} {
				n, err := io.WriteString(w, s)
				saw("write "+s, fmt.Sprint(n, " ", errorClass(err)))
			}
		},
	},
	{
		name: "more-than-declared-before-and-after-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "5")
			n, err := io.WriteString(w, "hello world")
			saw("write before", fmt.Sprint(n, " ", errorClass(err)))
			w.(http.Flusher).Flush()
			n, err = io.WriteString(w, "!")
			saw("write after", fmt.Sprint(n, " ", errorClass(err)))
		},
	},
	// Cases that hold: pinned.
	{
		name: "4KiB-and-one",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, strings.Repeat("a", 4097))
		},
	},
	{
		name: "more-than-declared-before-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "5")
			n, err := io.WriteString(w, "hello world") // accepted: the head is not out yet
			saw("write", fmt.Sprint(n, " ", errorClass(err)))
		},
	},
	{
		name: "more-than-declared-after-head",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "5")
			w.(http.Flusher).Flush()
			n, err := io.WriteString(w, "hello world")
			saw("write", fmt.Sprint(n, " ", errorClass(err)))
		},
	},
	{
		name: "less-than-declared",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "hello")
		},
	},
	{
		name: "less-than-declared-flushed",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "hello")
			w.(http.Flusher).Flush()
		},
	},
	{
		name: "invalid",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "-1")
			io.WriteString(w, "hello")
			w.(http.Flusher).Flush()
		},
	},
	{
		name: "not-modified-with-length",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusNotModified)
		},
	},
	{
		name: "no-content-with-length",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusNoContent)
		},
	},
	{
		name: "head-declared",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodHead, base+"/x", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "100")
		},
	},
	{
		name: "head-two-writes-past-4KiB",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodHead, base+"/x", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, strings.Repeat("a", 3000))
			io.WriteString(w, strings.Repeat("a", 3000))
		},
	},
	{
		name: "head-small",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodHead, base+"/x", nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			io.WriteString(w, "<html>")
		},
	},
	{
		name: "panic-after-declared-body",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Length", "2")
			io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
			panic("boom")
		},
	},
	// A Content-Length key the handler sets in lower case, straight in
	// the map, is no length to net/http's server, which reads only the
	// canonical key: it counts the body's length as if there were none,
	// checks no write against it, and sends every field, so its client
	// gets two values, and no ContentLength.
	{
		name: "lower-content-length",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["content-length"] = []string{"2"}
			io.WriteString(w, "ok")
		},
	},
	{
		name: "lower-content-length-wrong",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["content-length"] = []string{"5"}
			io.WriteString(w, "ok")
		},
	},
	{
		// Sent alone, the client trusts it: its read fails past it,
		// but the handler's writes do not.
		name: "lower-content-length-flushed-short",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["content-length"] = []string{"1"}
			io.WriteString(w, "o")
			w.(http.Flusher).Flush()
			_, err := io.WriteString(w, "kk")
			saw("write", err)
		},
	},
	{
		// The canonical key's length is sent after every other field.
		name: "content-length-both-cases",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["Content-Length"] = []string{"2"}
			w.Header()["content-length"] = []string{"5"}
			io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
			_, err := io.WriteString(w, "kk")
			saw("write", err != nil)
		},
	},
	{
		// An empty first value is no length, but it is sent, and none
		// is counted.
		name: "content-length-empty",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["Content-Length"] = []string{""}
			io.WriteString(w, "ok")
		},
	},
	{
		name: "content-length-no-values",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header()["Content-Length"] = []string{}
			io.WriteString(w, "ok")
		},
	},
	{
		name: "content-encoding-not-sniffed",
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "<html>")
		},
	},
}

// TestContentLengthEdges runs each of contentLengthCases in-process and
// over a unix socket to net/http's HTTP/2 server, and compares.
func TestContentLengthEdges(t *testing.T) {
	for _, c := range contentLengthCases {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, transports[0], c)
			want := run(t, transports[1], c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("in-process and net/http differ:\n%s", diff(got, want))
			}
		})
	}
}
