package matrix

import (
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
	"google.golang.org/grpc/codes"
)

// A cell the interrupt cut short says how many of -n calls it holds, and
// the conditions no longer claim -n calls of every method for it.
func TestMeasurePartialCell(t *testing.T) {
	full := load.Result{Calls: 10, Latencies: []time.Duration{time.Microsecond}, Errors: map[codes.Code]int{}}
	cut := load.Result{Calls: 3, Latencies: []time.Duration{2 * time.Microsecond}, Errors: map[codes.Code]int{}}
	none := load.Result{Errors: map[codes.Code]int{}}
	m := Measurement{
		Conditions:  Conditions{Load: load.Spec{N: 10, C: 1}, Count: 1, Message: "x"},
		Rows:        []Pairing{{Server: GRPCServer, Client: echoclient.GRPC, Kind: "inproc"}},
		Results:     [][]load.Result{{full, cut, none}},
		Interrupted: true,
	}
	var out strings.Builder
	if err := m.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1.000µs | 2.000µs (partial: 3 of 10 calls) | not run | not run |",
		"The interrupt cut the measurement short: a cell marked partial holds fewer calls",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, &out)
		}
	}
	m.Interrupted = false
	m.Results = [][]load.Result{{full, full, full, full}}
	out.Reset()
	if err := m.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "partial") || strings.Contains(out.String(), "cut the measurement short") {
		t.Errorf("a whole measurement is marked partial:\n%s", &out)
	}
}
