package inprochttp_test

import (
	"bytes"
	"log"
	"net/http"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/inprochttp"
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
	servers := map[string]func(t *testing.T, errorLog *log.Logger) (*http.Client, string){
		"inproc": func(t *testing.T, errorLog *log.Logger) (*http.Client, string) {
			return &http.Client{Transport: inprochttp.NewTransport(h, inprochttp.WithErrorLog(errorLog))}, "http://localhost"
		},
		"unix": func(t *testing.T, errorLog *log.Logger) (*http.Client, string) {
			return unixClientLogging(t, h, errorLog)
		},
	}
	for _, name := range []string{"inproc", "unix"} {
		t.Run("transport="+name, func(t *testing.T) {
			var logged lockedBuffer
			hc, base := servers[name](t, log.New(&logged, "", 0))
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
}
