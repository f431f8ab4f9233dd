package inprochttp_test

import (
	"bytes"
	"log"
	"net/http"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer for a logger that several goroutines
// write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// net/http's HTTP/2 server ignores a WriteHeader after the head silently
// (its HTTP/1 server is the one that logs "superfluous"), and the
// transport's error log says what net/http's server would log: nothing
// here, for either transport.
func TestSuperfluousWriteHeaderLogsNothing(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("x"))
		w.WriteHeader(http.StatusTeapot)
	})
	forEach(t, func(t *testing.T, tr transport) {
		var logged lockedBuffer
		hc, base := loggingClient(t, tr, h, log.New(&logged, "", 0))
		resp, err := hc.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		drain(resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("status %d, want the first, %d", resp.StatusCode, http.StatusAccepted)
		}
		if s := logged.String(); s != "" {
			t.Errorf("the error log has %q, want nothing", s)
		}
	})
}
