package localgrpc_test

import (
	"errors"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
)

// A server that accepts and never answers fails the call after the
// connect timeout, as grpc-go's connect deadline does, rather than
// holding it forever.
func TestHTTPClientConnectTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(held)
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for c := range held {
			c.Close()
		}
	})
	hc, base, err := localgrpc.HTTPClient(ln.Addr().String(), localgrpc.WithHTTPClientConnectTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	start := time.Now()
	resp, err := hc.Get(base + "/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a server that never answers answered")
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("error %v, want one that is os.ErrDeadlineExceeded", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call took %v with a connect timeout of 200ms", took)
	}
}

// Once the server has answered, a response may take longer than the
// connect timeout: it bounds the connection's making, not the calls.
func TestHTTPClientConnectTimeoutSparesSlowCalls(t *testing.T) {
	const timeout = 100 * time.Millisecond
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &protocols, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * timeout)
		w.Write([]byte("late"))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	hc, base, err := localgrpc.HTTPClient(ln.Addr().String(), localgrpc.WithHTTPClientConnectTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	for range 2 { // the second on the connection the first made
		resp, err := hc.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
}
