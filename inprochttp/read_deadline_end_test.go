package inprochttp_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// endsAtClose is a request body that sends nothing and ends cleanly
// (io.EOF) once closed, as some readers do: a read that the read deadline
// cut short must not look like the body's end to the handler.
type endsAtClose struct {
	once   sync.Once
	closed chan struct{}
}

func (b *endsAtClose) Read(p []byte) (int, error) {
	<-b.closed
	return 0, io.EOF
}

func (b *endsAtClose) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// A read of the request body that the read deadline ends fails with
// os.ErrDeadlineExceeded, however the client's body ends once closed: the
// handler must not take a body cut short for a whole one.
func TestReadDeadlineEndsReadWithDeadlineError(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		got := make(chan error, 1)
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			_, err := io.ReadAll(r.Body)
			got <- err
		}))
		body := &endsAtClose{closed: make(chan struct{})}
		defer body.Close()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/x", body)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		select {
		case err := <-got:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("the handler's read after its read deadline: %v, want an error wrapping os.ErrDeadlineExceeded", err)
			}
		case <-time.After(bound):
			t.Fatalf("the handler's read still waits %v after its read deadline", bound)
		}
	})
}
