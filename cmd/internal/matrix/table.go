package matrix

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// A Measurement is what measure measured.
// Results holds a result per row and method, in the order of
// echoclient.Methods (fewer if interrupted).
type Measurement struct {
	Env        report.Environment
	Conditions Conditions
	PID        int // of the clients' process
	Rows       []Pairing
	Results    [][]load.Result
	// Interrupted is whether the user's interrupt ended the
	// measurement: its last cell may hold fewer calls than Load.N.
	Interrupted bool
}

// Conditions are how the calls were made: measure's flags.
type Conditions struct {
	Load          load.Spec // its N, C and Warmup
	Message       string    // the text of each request
	Count         int       // requests per collect and update call
	Compress      bool      // gzip on every stack
	ServerProcess bool      // servers on sockets in child processes
}

// Failed is how many calls failed, in every cell.
func (m Measurement) Failed() int {
	n := 0
	for _, rs := range m.Results {
		for _, r := range rs {
			n += r.Failed()
		}
	}
	return n
}

// conditions says, in a sentence, how the calls were made.
func (m Measurement) conditions() string {
	f := m.Conditions
	at := "one at a time"
	if f.Load.C > 1 {
		at = fmt.Sprintf("%d at a time", f.Load.C)
	}
	compression := "off"
	if f.Compress {
		compression = "gzip"
	}
	s := fmt.Sprintf("%d calls of each method, %s, after %d warm-up calls; get and expand send one request of %q, collect and update %d; compression %s.", f.Load.N, at, f.Load.Warmup, f.Message, f.Count, compression)
	s += " Each call is timed alone, from the client's call to its return, with a context of --timeout's deadline:" +
		" bench's time/op is a benchmark loop's time divided by its calls, with no deadline, on a channel of its own rather than through a localgrpc server," +
		" so an in-process call of about a microsecond reads two to three times bench's time/op here."
	if m.Interrupted {
		s += " The interrupt cut the measurement short: a cell marked partial holds fewer calls, and one not run none."
	}
	return s
}

// serverProcess says where row's server ran: in the clients' process
// ("same") or in a child process ("child").
func (m Measurement) serverProcess(row Pairing) string {
	if row.PID == m.PID {
		return "same"
	}
	return "child"
}

// processes says, in a sentence, which process each server ran in.
func (m Measurement) processes() string {
	if !m.Conditions.ServerProcess {
		return fmt.Sprintf("Servers and clients ran in one process (pid %d), sharing its scheduler and heap (server process: same); --server-process runs the servers on sockets in processes of their own.", m.PID)
	}
	var children []string
	seen := make(map[int]bool)
	for _, row := range m.Rows {
		if row.PID != m.PID && !seen[row.PID] {
			seen[row.PID] = true
			children = append(children, fmt.Sprintf("%s in pid %d", row.Server, row.PID))
		}
	}
	return fmt.Sprintf("The servers on sockets ran in child processes (server process: child; %s), the clients in this one (pid %d); in-process calls cannot leave the process, so the inproc servers ran in the clients' process (server process: same).", strings.Join(children, ", "), m.PID)
}

// WriteMarkdown writes the environment, then a matrix of the mean time per
// call and one of the p99, as the Echo API's reference measures them: a
// row per server, client and address, a column per method.
func (m Measurement) WriteMarkdown(out io.Writer) error {
	w := new(strings.Builder)
	fmt.Fprintf(w, "Environment: %s.\n\n%s\n\n%s\n", report.EscapeMarkdown(m.Env.Summary()), report.EscapeMarkdown(m.conditions()), report.EscapeMarkdown(m.processes()))
	for _, table := range []struct {
		title string
		stat  func(load.Result) time.Duration
	}{
		{"Mean time per call", load.Result.Mean},
		{"p99 time per call", func(r load.Result) time.Duration { return r.Percentile(99) }},
	} {
		fmt.Fprintf(w, "\n### %s\n\n| server | client | address | server process |", table.title)
		for _, meth := range echoclient.Methods {
			fmt.Fprintf(w, " %s |", meth)
		}
		fmt.Fprintf(w, "\n|---|---|---|---|%s\n", strings.Repeat("--:|", len(echoclient.Methods)))
		for i, row := range m.Rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s |", row.Server, row.Client, row.Kind, m.serverProcess(row))
			for j := range echoclient.Methods {
				cell := "not run"
				if j < len(m.Results[i]) {
					cell = markdownCell(m.Results[i][j], m.Conditions.Load.N, table.stat)
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			fmt.Fprintln(w)
		}
	}
	_, err := io.WriteString(out, w.String())
	return err
}

// markdownCell is a result's statistic, with its errors if any, and how
// many of the n calls it holds if the interrupt cut it short.
func markdownCell(r load.Result, n int, stat func(load.Result) time.Duration) string {
	if r.Calls == 0 {
		return "not run"
	}
	if len(r.Latencies) == 0 {
		return "failed: " + r.ErrorCounts()
	}
	cell := load.FormatDuration(stat(r))
	if r.Failed() > 0 {
		cell += " (errors: " + r.ErrorCounts() + ")"
	}
	if r.Calls < n {
		cell += fmt.Sprintf(" (partial: %d of %d calls)", r.Calls, n)
	}
	return cell
}
