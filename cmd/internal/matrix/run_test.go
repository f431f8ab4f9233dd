package matrix

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
)

// cells records what Run tells its Progress.
type cells struct{ started, done []int }

func (c *cells) Start(cell int, _ Pairing, _ echoclient.Method) { c.started = append(c.started, cell) }
func (c *cells) Done(cell int, _ load.Result)                   { c.done = append(c.done, cell) }

// inprocRows are connect-go's in-process rows, served by one handler.
func inprocRows() []Pairing {
	mux := http.NewServeMux()
	mux.Handle(echov1connect.NewEchoHandler(echoconnect.Server{}))
	return Pairings(map[string]map[string]ServedAt{ConnectServer: {"inproc": {Addr: "inproc", Handler: mux}}})
}

func dialInproc(row Pairing) (echoclient.Client, error) {
	return echoclient.NewInprocHTTP(row.Client, row.Handler, false)
}

// TestRun measures every method of every row, tells Progress of each
// cell in order, and holds -n calls without error in each.
func TestRun(t *testing.T) {
	m := Measurement{Conditions: Conditions{Load: load.Spec{N: 3, C: 1, Timeout: 10 * time.Second}, Message: "a b", Count: 2}, Rows: inprocRows()}
	var p cells
	if err := m.Run(t.Context(), dialInproc, &p); err != nil {
		t.Fatal(err)
	}
	n := len(m.Rows) * len(echoclient.Methods)
	if n == 0 || len(p.started) != n || !slices.Equal(p.started, p.done) || !slices.IsSorted(p.started) {
		t.Errorf("progress started %v, done %v; want cells 0 to %d in order", p.started, p.done, n-1)
	}
	for i, rs := range m.Results {
		if len(rs) != len(echoclient.Methods) {
			t.Fatalf("row %d has %d results, want %d", i, len(rs), len(echoclient.Methods))
		}
		for j, r := range rs {
			if r.Calls != 3 || r.Failed() != 0 {
				t.Errorf("row %d, %s: %d calls, %d failed; want 3, 0 (%s)", i, echoclient.Methods[j], r.Calls, r.Failed(), r.ErrorCounts())
			}
		}
	}
	if m.Interrupted || m.Failed() != 0 {
		t.Errorf("interrupted %v, failed %d; want false, 0", m.Interrupted, m.Failed())
	}
}

// TestRunInterrupted stops at once when ctx has ended, and says so.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := Measurement{Conditions: Conditions{Load: load.Spec{N: 3, C: 1, Timeout: 10 * time.Second}, Message: "a", Count: 1}, Rows: inprocRows()}
	var p cells
	if err := m.Run(ctx, dialInproc, &p); err != nil {
		t.Fatal(err)
	}
	if !m.Interrupted || len(p.started) != 0 || len(m.Results) != len(m.Rows) || len(m.Results[0]) != 0 {
		t.Errorf("interrupted %v, cells started %v, results %v; want true, none, none", m.Interrupted, p.started, m.Results)
	}
}
