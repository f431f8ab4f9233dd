package inprochttp_test

import (
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/inprochttp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A transport is a way for a client to reach a handler: in-process, or
// over a unix socket to net/http's HTTP/2 server, the oracle the
// in-process one must agree with.
type transport struct {
	name string
	// client returns a client of h and the base URL to give it. What it
	// starts stops in t.Cleanup.
	client func(t *testing.T, h http.Handler) (*http.Client, string)
}

var transports = []transport{
	{"inproc", inprocClient},
	{"unix", unixClient},
}

// inprocClient reaches h in-process. The handler's panics are logged to
// the test's log.
func inprocClient(t *testing.T, h http.Handler) (*http.Client, string) {
	return &http.Client{Transport: inprochttp.NewTransport(h, inprochttp.WithErrorLog(testLog(t)))}, "http://localhost"
}

// unixClient serves h with net/http's HTTP/2 server (h2c) on a unix socket
// bound by localgrpc.Listen and reaches it with localgrpc.HTTPClient.
func unixClient(t *testing.T, h http.Handler) (*http.Client, string) {
	return unixClientLogging(t, h, testLog(t))
}

// unixClientLogging is unixClient with the server's error log.
func unixClientLogging(t *testing.T, h http.Handler, errorLog *log.Logger) (*http.Client, string) {
	addr := unixServer(t, &http.Server{Handler: h, ErrorLog: errorLog})
	hc, base, err := localgrpc.HTTPClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections) // before the server closes
	return hc, base
}

// loggingClient is tr's client of h, whose server logs to errorLog: the
// transport's WithErrorLog, or net/http's server's ErrorLog.
func loggingClient(t *testing.T, tr transport, h http.Handler, errorLog *log.Logger) (*http.Client, string) {
	if tr.name == "inproc" {
		return &http.Client{Transport: inprochttp.NewTransport(h, inprochttp.WithErrorLog(errorLog))}, "http://localhost"
	}
	return unixClientLogging(t, h, errorLog)
}

// unixServer serves srv, made to speak HTTP/2 without TLS (h2c), on a
// unix socket bound by localgrpc.Listen, and returns the socket's
// address. It stops in t.Cleanup.
func unixServer(t *testing.T, srv *http.Server) string {
	dir, err := os.MkdirTemp("", "inprochttp-") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	addr := "unix:" + filepath.Join(dir, "s.sock")
	l, err := localgrpc.Listen(addr, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv.Protocols = &protocols
	var served sync.WaitGroup
	served.Go(func() {
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Cleanup(func() {
		srv.Close()
		served.Wait()
	})
	return addr
}

// testLog is a logger that writes to t's log while t runs.
func testLog(t *testing.T) *log.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return log.New(w, "", 0)
}

type testWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Logf("%s", p)
	}
	return len(p), nil
}

// forEach runs f for each transport, as a subtest.
func forEach(t *testing.T, f func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run("transport="+tr.name, func(t *testing.T) { f(t, tr) })
	}
}

// drain reads r to its end and closes it, returning what it read.
func drain(r io.ReadCloser) (string, error) {
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}
