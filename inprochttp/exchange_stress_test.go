package inprochttp_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Thousands of exchanges at once on one transport, each ending its own
// way: echoed to the end, cancelled or closed mid-stream, reset by a
// panic, cancelled before or after the head while the handler ignores its
// context, or served by a handler whose goroutine writes on after it
// returned, until its writer panics. Run it with -race and -cpu 1,2: no race, no hang, and no
// goroutine left once the handlers have returned. In-process only: as
// many connections at once exhaust a unix socket's backlog.
func TestExchangeStress(t *testing.T) {
	var handlers sync.WaitGroup
	hc, base := inprocClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		switch r.URL.Path {
		case "/echo":
			w.Header().Set(http.TrailerPrefix+"X-Path", r.URL.Path)
			io.Copy(w, r.Body)
		case "/forever":
			chunk := strings.Repeat("x", 1000)
			for {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		case "/abort":
			io.WriteString(w, "x")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "/ignore":
			w.(http.Flusher).Flush()
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		case "/leftover":
			handlers.Add(1)
			go func() {
				defer handlers.Done()
				// Once the handler has returned, the writer panics,
				// as net/http's does.
				defer func() { recover() }()
				for {
					if _, err := io.WriteString(w, "late"); err != nil {
						return
					}
					if err := http.NewResponseController(w).Flush(); err != nil {
						return
					}
				}
			}()
		}
	}))
	var wg sync.WaitGroup
	for i := range 2000 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch i % 5 {
			case 0:
				body := strings.Repeat("y", rand.IntN(20000))
				resp, err := hc.Post(base+"/echo", "text/plain", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				got, err := drain(resp.Body)
				if err != nil || got != body || resp.Trailer.Get("X-Path") != "/echo" {
					t.Errorf("echo: %d bytes of %d, %v, trailer %v", len(got), len(body), err, resp.Trailer)
				}
			case 1:
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/forever", nil)
				resp, err := hc.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.CopyN(io.Discard, resp.Body, int64(rand.IntN(300000)))
				if rand.IntN(2) == 0 {
					cancel()
					if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, context.Canceled) {
						t.Errorf("a read after cancel: %v", err)
					}
				}
				resp.Body.Close()
			case 2:
				resp, err := hc.Get(base + "/abort")
				if err == nil {
					_, err = drain(resp.Body)
				}
				if err == nil {
					t.Error("an aborted response ended without an error")
				}
			case 3:
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ignore", nil)
				go func() {
					time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
					cancel()
				}()
				if resp, err := hc.Do(req); err == nil {
					drain(resp.Body)
				}
			case 4:
				resp, err := hc.Get(base + "/leftover")
				if err != nil {
					t.Error(err)
					return
				}
				drain(resp.Body)
			}
		})
	}
	wg.Wait()
	handlers.Wait()
	goleak.VerifyNone(t)
}
