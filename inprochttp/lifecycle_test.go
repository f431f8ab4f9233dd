package inprochttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// bound is how long anything the tests wait for may take: long enough for
// a busy machine, short enough to fail a hang.
const bound = 10 * time.Second

// waitFor fails t if ch is not closed within bound.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(bound):
		t.Fatalf("%s: not within %v", what, bound)
	}
}

// The handler reads each request line while the client reads the answer
// to the last one: both bodies stream at once.
func TestFullDuplex(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush() // the head, before any request line
			lines := bufio.NewScanner(r.Body)
			for lines.Scan() {
				io.WriteString(w, strings.ToUpper(lines.Text())+"\n")
				w.(http.Flusher).Flush()
			}
		}))
		pr, pw := io.Pipe()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/duplex", pr)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answers := bufio.NewReader(resp.Body)
		for _, word := range []string{"one", "two", "three"} {
			if _, err := io.WriteString(pw, word+"\n"); err != nil {
				t.Fatal(err)
			}
			got, err := answers.ReadString('\n')
			if err != nil || got != strings.ToUpper(word)+"\n" {
				t.Fatalf("answer to %q: %q, %v", word, got, err)
			}
		}
		pw.Close()
		if rest, err := drain(resp.Body); rest != "" || err != nil {
			t.Errorf("after the last request: %q, %v", rest, err)
		}
	})
}

// blockingHandler flushes the head if flushFirst, then ignores its
// context until release is closed; ctxEnded is closed when its context
// ends, and started when it is running.
type blockingHandler struct {
	flushFirst bool
	started    chan struct{}
	ctxEnded   chan struct{}
	release    chan struct{}
	ctxErr     error // read once ctxEnded is closed
}

func newBlockingHandler(t *testing.T, flushFirst bool) *blockingHandler {
	h := &blockingHandler{flushFirst, make(chan struct{}), make(chan struct{}), make(chan struct{}), nil}
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	return h
}

func (h *blockingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.flushFirst {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
	}
	close(h.started)
	<-r.Context().Done()
	h.ctxErr = r.Context().Err()
	close(h.ctxEnded)
	<-h.release // ignores its context: the client must not wait for it
}

// A client that cancels gets its error at once, before the head or while
// reading the body, though the handler ignores its context; the handler's
// context ends.
func TestCancel(t *testing.T) {
	for _, afterHead := range []bool{false, true} {
		name := "before-head"
		if afterHead {
			name = "after-head"
		}
		t.Run(name, func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				h := newBlockingHandler(t, afterHead)
				hc, base := tr.client(t, h)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/block", nil)
				done := make(chan struct{})
				var err error
				go func() {
					defer close(done)
					var resp *http.Response
					if resp, err = hc.Do(req); err != nil {
						return
					}
					defer resp.Body.Close()
					buf := make([]byte, len("first"))
					if _, err = io.ReadFull(resp.Body, buf); err != nil {
						return
					}
					_, err = resp.Body.Read(buf)
				}()
				waitFor(t, h.started, "the handler's start")
				cancel()
				waitFor(t, done, "the client's return after cancel")
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the client got %v, want context.Canceled", err)
				}
				waitFor(t, h.ctxEnded, "the handler's context's end")
				if !errors.Is(h.ctxErr, context.Canceled) {
					t.Errorf("the handler's context ended with %v", h.ctxErr)
				}
			})
		})
	}
}

// A client's deadline ends the exchange and the handler's context.
func TestDeadline(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		h := newBlockingHandler(t, false)
		hc, base := tr.client(t, h)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/block", nil)
		start := time.Now()
		_, err := hc.Do(req)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the client got %v, want context.DeadlineExceeded", err)
		}
		if took := time.Since(start); took > bound {
			t.Errorf("the client returned after %v", took)
		}
		waitFor(t, h.ctxEnded, "the handler's context's end")
	})
}

// A client whose deadline passes gets context.DeadlineExceeded, from
// RoundTrip or from its read of the body, never a clean response, even
// from a handler that answers once its context ends. In-process that
// context carries the client's deadline, and may end before the client's
// own context, whose timer has yet to fire; over a socket it ends with
// the client's reset. Of many requests, none may end cleanly.
func TestDeadlineAnsweredAtDeadline(t *testing.T) {
	for _, flushFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("flushFirst=%v", flushFirst), func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if flushFirst {
						w.(http.Flusher).Flush()
					}
					<-r.Context().Done()
					io.WriteString(w, "partial results")
				}))
				const requests = 200
				clean, other := 0, 0
				for range requests {
					ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
					resp, err := hc.Do(req)
					if err == nil {
						_, err = io.ReadAll(resp.Body)
						resp.Body.Close()
					}
					cancel()
					switch {
					case err == nil:
						clean++
					case !errors.Is(err, context.DeadlineExceeded):
						other++
						t.Logf("not DeadlineExceeded: %v", err)
					}
				}
				if clean > 0 || other > 0 {
					t.Errorf("of %d requests past their deadline, %d ended cleanly and %d with another error than context.DeadlineExceeded", requests, clean, other)
				}
			})
		})
	}
}

// The handler's context carries the client's deadline in-process, and ends
// with DeadlineExceeded then.
func TestDeadlineCarried(t *testing.T) {
	deadline := time.Now().Add(100 * time.Millisecond)
	type seen struct {
		deadline time.Time
		ok       bool
		err      error
	}
	saw := make(chan seen, 1)
	release := make(chan struct{})
	defer close(release)
	hc, base := inprocClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := r.Context().Deadline()
		<-r.Context().Done()
		saw <- seen{d, ok, r.Context().Err()}
		<-release
	}))
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
	if _, err := hc.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the client got %v", err)
	}
	s := <-saw
	if !s.ok || !s.deadline.Equal(deadline) {
		t.Errorf("the handler's deadline is %v, %v; want the client's, %v", s.deadline, s.ok, deadline)
	}
	if !errors.Is(s.err, context.DeadlineExceeded) && !errors.Is(s.err, context.Canceled) {
		t.Errorf("the handler's context ended with %v", s.err)
	}
}

// A client that closes the body before its end ends the handler's context
// and its writes, as an HTTP/2 stream reset does.
func TestCloseBodyEarly(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		ended := make(chan struct{})
		var writeErr, ctxErr error
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(ended)
			chunk := strings.Repeat("x", 1024)
			for writeErr == nil {
				_, writeErr = io.WriteString(w, chunk)
				if writeErr == nil {
					writeErr = http.NewResponseController(w).Flush()
				}
			}
			<-r.Context().Done()
			ctxErr = r.Context().Err()
		}))
		resp, err := hc.Get(base + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		waitFor(t, ended, "the handler's end")
		if writeErr == nil || !errors.Is(ctxErr, context.Canceled) {
			t.Errorf("the handler's write: %v; its context: %v", writeErr, ctxErr)
		}
		if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
			t.Error("a read after Close succeeded")
		}
	})
}

// A client whose request body fails gets that error, and the handler's
// read and context end, as when an HTTP/2 client resets its stream: the
// context's cause is context.Canceled.
func TestRequestBodyFails(t *testing.T) {
	broken := errors.New("the request body broke")
	forEach(t, func(t *testing.T, tr transport) {
		ended := make(chan struct{})
		var readErr, ctxErr error
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(ended)
			_, readErr = io.ReadAll(r.Body)
			<-r.Context().Done()
			ctxErr = context.Cause(r.Context())
		}))
		body := io.MultiReader(strings.NewReader("some"), errReader{broken})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", io.NopCloser(body))
		if _, err := hc.Do(req); !errors.Is(err, broken) {
			t.Errorf("the client got %v, want %v", err, broken)
		}
		waitFor(t, ended, "the handler's end")
		if readErr == nil || !errors.Is(ctxErr, context.Canceled) {
			t.Errorf("the handler's read: %v; its context's cause: %v", readErr, ctxErr)
		}
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// Abandoned exchanges leave no goroutine once their context ends: a
// response never read nor closed, a stream of requests never finished.
func TestAbandoned(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			buf := make([]byte, 64)
			for { // an endless stream, answering each request
				n, err := r.Body.Read(buf)
				if err != nil {
					return
				}
				w.Write(buf[:n])
				if _, err := io.WriteString(w, strings.Repeat("x", 1<<10)); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}))
		ctx, cancel := context.WithCancel(context.Background())
		for range 10 {
			pr, pw := io.Pipe()
			defer pw.Close()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/x", pr)
			go io.WriteString(pw, "request")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp // neither read nor closed
		}
		cancel()
	})
	goleak.VerifyNone(t)
}

// TestStreamResets: a stream reset, by the server or by the client, is
// an error in which errors.As finds a golang.org/x/net/http2.StreamError
// with the code net/http's gives, for the client and for the handler
// alike: a handler's panic and a passed write deadline reset with
// INTERNAL_ERROR; a client refusing a head over its limit with
// PROTOCOL_ERROR; a client that cancels or closes the body with CANCEL.
// The handler's writes after its write deadline fail with
// os.ErrDeadlineExceeded. However the stream ends, the cause of the
// handler's context is context.Canceled, as net/http's server cancels
// it. A client that fails its connection on a head
// far over its limit resets nothing: the handler's read fails as the
// connection is gone.
func TestStreamResets(t *testing.T) {
	// An observed is what each end saw of a reset: the client's error
	// (RoundTrip's, else its read of the body), and the handler's
	// read of the request body and flush after it.
	type observed struct{ client, read, flush string }
	// readAfterReset sends the head, and reads once the client has
	// reset the stream.
	readAfterReset := func(w http.ResponseWriter, r *http.Request, reset <-chan struct{}) (error, error) {
		w.(http.Flusher).Flush()
		<-reset
		_, read := r.Body.Read(make([]byte, 1))
		return read, nil
	}
	for _, tc := range []struct {
		name   string
		limits headerLimits
		// handler responds and, unless it panics, returns its read's
		// and its flush's errors after the reset, which reset waits for.
		handler func(w http.ResponseWriter, r *http.Request, reset <-chan struct{}) (read, flush error)
		// cancelled: the client cancels its context once it has the
		// head; closed: it closes the body.
		cancelled, closed bool
		want              observed
		// oracleFlushRaces: net/http closes the stream's body before it
		// records why the stream closed (http2 closeStream), so its
		// handler's flush after the read may see no error yet; ours
		// must still give the case's.
		oracleFlushRaces bool
	}{
		{
			name: "panic-before-head",
			handler: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) (error, error) {
				panic("boom")
			},
			want: observed{client: "stream error, INTERNAL_ERROR"},
		},
		{
			name: "abort-after-head",
			handler: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) (error, error) {
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			},
			want: observed{client: "stream error, INTERNAL_ERROR"},
		},
		{
			name: "write-deadline",
			handler: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) (error, error) {
				w.(http.Flusher).Flush()
				http.NewResponseController(w).SetWriteDeadline(time.Now().Add(-time.Second))
				_, read := r.Body.Read(make([]byte, 1)) // ends with the reset
				return read, http.NewResponseController(w).Flush()
			},
			want:             observed{"stream error, INTERNAL_ERROR", "stream error, INTERNAL_ERROR", "os.ErrDeadlineExceeded"},
			oracleFlushRaces: true,
		},
		{
			name:   "head-over-limit",
			limits: headerLimits{response: 1000},
			handler: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) (error, error) {
				w.Header().Set("X-Pad", strings.Repeat("p", 1300)) // over, not far over
				w.(http.Flusher).Flush()
				_, read := r.Body.Read(make([]byte, 1))
				return read, nil
			},
			want: observed{client: "stream error, PROTOCOL_ERROR", read: "stream error, PROTOCOL_ERROR"},
		},
		{
			// The client fails its connection instead: the handler's
			// read fails as the connection is gone, with no reset.
			name:   "head-far-over-limit",
			limits: headerLimits{response: 1000},
			handler: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) (error, error) {
				w.Header().Set("X-Pad", strings.Repeat("p", 1400)) // longer than the bound
				w.(http.Flusher).Flush()
				_, read := r.Body.Read(make([]byte, 1))
				return read, nil
			},
			want: observed{client: "connection error, COMPRESSION_ERROR", read: "error"},
		},
		{
			name:      "client-cancels",
			cancelled: true,
			handler:   readAfterReset,
			want:      observed{client: "context.Canceled", read: "stream error, CANCEL"},
		},
		{
			name:    "client-closes-body",
			closed:  true,
			handler: readAfterReset,
			want:    observed{client: "error", read: "stream error, CANCEL"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]observed
			for i, tr := range transports {
				t.Run("transport="+tr.name, func(t *testing.T) {
					reset := make(chan struct{})
					errs := make(chan [3]error, 1)
					hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						read, flush := tc.handler(w, r, reset)
						select { // net/http's may end a moment after the read
						case <-r.Context().Done():
						case <-time.After(bound):
						}
						errs <- [3]error{read, flush, context.Cause(r.Context())}
					}), tc.limits)
					// Bounded, so that a handler that misses the
					// reset fails the test rather than hangs it.
					ctx, cancel := context.WithTimeout(t.Context(), bound)
					defer cancel()
					// A request body that sends nothing and ends with
					// the context, as net/http's client reads it while
					// it watches nothing else.
					pr, pw := io.Pipe()
					defer pw.Close()
					defer context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })()
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/x", pr)
					resp, err := hc.Do(req)
					if err == nil {
						switch {
						case tc.cancelled:
							cancel()
						case tc.closed:
							resp.Body.Close()
						}
						_, err = io.ReadAll(resp.Body)
						resp.Body.Close()
					}
					close(reset)
					got[i].client = errorClass(err)
					if tc.want.read == "" && tc.want.flush == "" {
						return // the handler panicked
					}
					select {
					case e := <-errs:
						got[i].read, got[i].flush = errorClass(e[0]), errorClass(e[1])
						if !errors.Is(e[2], context.Canceled) {
							t.Errorf("the cause of the handler's context: %v; want context.Canceled", e[2])
						}
					case <-time.After(bound):
						t.Fatalf("the handler did not see the reset within %v", bound)
					}
				})
			}
			if tc.oracleFlushRaces && got[1].flush == "" {
				got[1].flush = tc.want.flush
			}
			if got[0] != got[1] || got[1] != tc.want {
				t.Errorf("in-process %+v\nnet/http   %+v\nthe case expects %+v", got[0], got[1], tc.want)
			}
		})
	}
}

// TestWriteAfterEnd: once the client has gone, or the handler's write
// deadline has passed, the handler's writes go, as over net/http,
// through a 4 KiB buffer that can no longer be flushed: a write that
// fits in it succeeds; the one that does not fails, having taken what
// fit; a flush of what it holds fails; and after such a failure every
// write fails. A flush with nothing held fails without sticking. The
// writes fail with os.ErrDeadlineExceeded after the write deadline,
// with an error of no other identity after the client's reset. A push
// fails, with an error of no other identity.
func TestWriteAfterEnd(t *testing.T) {
	// steps are a handler's writes (of n bytes), flushes and pushes.
	type step struct {
		flush, push bool
		n           int
	}
	write := func(n int) step { return step{n: n} }
	flush := step{flush: true}
	push := step{push: true}
	for _, tc := range []struct {
		name          string
		writeDeadline bool // else the client cancels
		steps         []step
		want          []string // each step's result: bytes taken, and the error's class
	}{
		{"cancel/write-write-write-flush", false, []step{write(4), write(5000), write(4), flush},
			[]string{"4 ", "4092 error", "0 error", "0 error"}},
		{"cancel/flush-write-flush-write", false, []step{flush, write(4), flush, write(4)},
			[]string{"0 error", "4 ", "0 error", "0 error"}},
		{"cancel/write-past-buffer", false, []step{write(5000), write(4)},
			[]string{"0 error", "0 error"}},
		// A push fails once the stream is closed, as net/http's does,
		// whatever closed it.
		{"cancel/push", false, []step{push}, []string{"0 error"}},
		{"write-deadline/push", true, []step{push}, []string{"0 error"}},
		{"write-deadline/write-write-write-flush", true, []step{write(4), write(5000), write(4), flush},
			[]string{"4 ", "4092 os.ErrDeadlineExceeded", "0 os.ErrDeadlineExceeded", "0 os.ErrDeadlineExceeded"}},
		{"write-deadline/flush-write-flush-write", true, []step{flush, write(4), flush, write(4)},
			[]string{"0 os.ErrDeadlineExceeded", "4 ", "0 os.ErrDeadlineExceeded", "0 os.ErrDeadlineExceeded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]string
			for i, tr := range transports {
				// net/http's server may take the reset after a step on a
				// busy machine: each of a few runs is net/http's, and one
				// must give what the case expects. The in-process one has
				// one run.
				for attempt := 0; attempt == 0 || i == 1 && attempt < 10 && !slices.Equal(got[i], tc.want); attempt++ {
					t.Run("transport="+tr.name, func(t *testing.T) {
						results := make(chan []string, 1)
						hasHead := make(chan struct{})
						hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
							w.(http.Flusher).Flush() // the head: nothing is held
							// Not before: net/http's RoundTrip may take a
							// reset that follows the head for its answer.
							<-hasHead
							if tc.writeDeadline {
								http.NewResponseController(w).SetWriteDeadline(time.Now().Add(-time.Second))
							}
							<-r.Context().Done() // the reset has come
							var out []string
							for _, s := range tc.steps {
								n, err := 0, error(nil)
								switch {
								case s.flush:
									err = http.NewResponseController(w).Flush()
								case s.push:
									err = w.(http.Pusher).Push("/style.css", nil)
								default:
									n, err = w.Write(make([]byte, s.n))
								}
								out = append(out, fmt.Sprint(n, " ", errorClass(err)))
							}
							results <- out
						}))
						ctx, cancel := context.WithCancel(t.Context())
						defer cancel()
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
						resp, err := hc.Do(req)
						close(hasHead)
						if err != nil {
							t.Fatal(err)
						}
						if !tc.writeDeadline {
							cancel()
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						select {
						case got[i] = <-results:
						case <-time.After(bound):
							t.Fatalf("the handler did not see its response end within %v", bound)
						}
					})
				}
			}
			if !slices.Equal(got[0], got[1]) || !slices.Equal(got[1], tc.want) {
				t.Errorf("in-process %q\nnet/http   %q\nthe case expects %q", got[0], got[1], tc.want)
			}
		})
	}
}

// The files of a multipart form the handler parsed to disk are removed
// once it returns, or panics, before its response ends, as net/http's
// server removes them (Request.MultipartForm.RemoveAll).
func TestMultipartFilesRemoved(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where ParseMultipartForm writes them
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("f", "big.bin")
	fw.Write(bytes.Repeat([]byte("x"), 64<<10))
	mw.Close()
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprint("panics=", panics), func(t *testing.T) {
			forEach(t, func(t *testing.T, tr transport) {
				files := make(chan string, 1)
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if err := r.ParseMultipartForm(1 << 10); err != nil { // the file goes to disk
						t.Error(err)
						return
					}
					f, err := r.MultipartForm.File["f"][0].Open()
					if err != nil {
						t.Error(err)
						return
					}
					defer f.Close()
					if osf, ok := f.(*os.File); ok {
						files <- osf.Name()
					}
					if panics {
						panic(http.ErrAbortHandler)
					}
				}))
				resp, err := hc.Post(base+"/x", mw.FormDataContentType(), bytes.NewReader(form.Bytes()))
				if err == nil {
					_, err = drain(resp.Body)
				}
				if (err != nil) != panics {
					t.Fatalf("the exchange ended with %v", err)
				}
				var name string
				select {
				case name = <-files:
				default:
					t.Fatal("the handler kept no file on disk")
				}
				if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the form's file is still there once the response ended: %v", err)
				}
			})
		})
	}
}
