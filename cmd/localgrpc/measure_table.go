package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// measurement is what measure measured: per row, a result per method, in
// the order of methods (fewer if interrupted).
type measurement struct {
	env     report.Environment
	flags   measureFlags
	pid     int // of this process, the clients'
	rows    []pairing
	results [][]load.Result
	// interrupted is whether the user's interrupt ended the measurement:
	// its last cell may hold fewer calls than -n.
	interrupted bool
}

func (m measurement) failed() int {
	n := 0
	for _, rs := range m.results {
		for _, r := range rs {
			n += r.Failed()
		}
	}
	return n
}

// conditions says, in a sentence, how the calls were made.
func (m measurement) conditions() string {
	f := m.flags
	at := "one at a time"
	if f.c > 1 {
		at = fmt.Sprintf("%d at a time", f.c)
	}
	compression := "off"
	if f.compress {
		compression = "gzip"
	}
	s := fmt.Sprintf("%d calls of each method, %s, after %d warm-up calls; get and expand send one request of %q, collect and update %d; compression %s.", f.n, at, f.warmup, f.message, f.count, compression)
	s += " Each call is timed alone, from the client's call to its return, with a context of --timeout's deadline:" +
		" bench's time/op is a benchmark loop's time divided by its calls, with no deadline, on a channel of its own rather than through a localgrpc server," +
		" so an in-process call of about a microsecond reads two to three times bench's time/op here."
	if m.interrupted {
		s += " The interrupt cut the measurement short: a cell marked partial holds fewer calls, and one not run none."
	}
	return s
}

// serverProcess says where row's server ran: in the clients' process
// ("same") or in a child process ("child").
func (m measurement) serverProcess(row pairing) string {
	if row.pid == m.pid {
		return "same"
	}
	return "child"
}

// processes says, in a sentence, which process each server ran in.
func (m measurement) processes() string {
	if !m.flags.serverProcess {
		return fmt.Sprintf("Servers and clients ran in one process (pid %d), sharing its scheduler and heap (server process: same); --server-process runs the servers on sockets in processes of their own.", m.pid)
	}
	var children []string
	seen := make(map[int]bool)
	for _, row := range m.rows {
		if row.pid != m.pid && !seen[row.pid] {
			seen[row.pid] = true
			children = append(children, fmt.Sprintf("%s in pid %d", row.server, row.pid))
		}
	}
	return fmt.Sprintf("The servers on sockets ran in child processes (server process: child; %s), the clients in this one (pid %d); in-process calls cannot leave the process, so the inproc servers ran in the clients' process (server process: same).", strings.Join(children, ", "), m.pid)
}

// writeMarkdown writes the environment, then a matrix of the mean time per
// call and one of the p99, as the Echo API's reference measures them: a
// row per server, client and address, a column per method.
func (m measurement) writeMarkdown(out io.Writer) error {
	w := new(strings.Builder)
	fmt.Fprintf(w, "Environment: %s.\n\n%s\n\n%s\n", report.EscapeMarkdown(m.env.Summary()), report.EscapeMarkdown(m.conditions()), report.EscapeMarkdown(m.processes()))
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
		for i, row := range m.rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s |", row.server, row.client, row.kind, m.serverProcess(row))
			for j := range echoclient.Methods {
				cell := "not run"
				if j < len(m.results[i]) {
					cell = markdownCell(m.results[i][j], m.flags.n, table.stat)
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			fmt.Fprintln(w)
		}
	}
	_, err := io.WriteString(out, w.String())
	return err
}

// measurePageTitle opens the page writePage writes.
const measurePageTitle = "# localgrpc measure\n\n"

// writePage writes a whole markdown page: its title, how and when it was
// made, what measure measures, then writeMarkdown's tables.
func (m measurement) writePage(out io.Writer, command string, at time.Time) error {
	if _, err := fmt.Fprintf(out, "%sMade by %s on %s.\n\n%s\n\n", measurePageTitle, report.EscapeMarkdown(command), at.UTC().Format(time.DateOnly), report.EscapeMarkdown(measureMethod)); err != nil {
		return err
	}
	return m.writeMarkdown(out)
}

// measureMethod says, in a paragraph, what measure measures; the page
// and --help say it.
const measureMethod = "The Echo API (Get, Expand, Collect, Update) served on grpc-go and on connect-go, " +
	"on TCP, a unix socket, an abstract socket and in-process, and grpc-go's on shm:, " +
	"called by every client that can call each server: grpc-go, and connect-go in the Connect, gRPC and gRPC-Web protocols. " +
	"Each cell is one run of many calls, so differences under about 30% are noise: rerun before trusting a ranking."

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

// writeCSV writes a row per server, client, address and method, with the
// server's process (same as the clients' or a child, and its pid) and every
// statistic, times in seconds, and the environment in the last columns.
func (m measurement) writeCSV(out io.Writer) error {
	cw := csv.NewWriter(out)
	header := []string{"server", "client", "address", "server_process", "server_pid", "method", "calls", "errors", "error_codes",
		"mean_sec", "p50_sec", "p90_sec", "p99_sec", "max_sec", "calls_per_sec",
		"concurrency", "requests_per_stream", "compression", "go", "goos", "goarch", "cpu", "numcpu", "gomaxprocs"}
	for _, mod := range m.env.Modules {
		header = append(header, mod.Name)
	}
	cw.Write(header)
	env := []string{m.env.GoVersion, m.env.GOOS, m.env.GOARCH, m.env.CPU, strconv.Itoa(m.env.NumCPU), strconv.Itoa(m.env.GOMAXPROCS[0])}
	for _, mod := range m.env.Modules {
		env = append(env, mod.Version)
	}
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', 6, 64) }
	for i, row := range m.rows {
		for j, r := range m.results[i] {
			stats := []string{"", "", "", "", ""}
			if len(r.Latencies) > 0 {
				stats = []string{sec(r.Mean()), sec(r.Percentile(50)), sec(r.Percentile(90)), sec(r.Percentile(99)), sec(r.Latencies[len(r.Latencies)-1])}
			}
			codes := ""
			if r.Failed() > 0 {
				codes = r.ErrorCounts()
			}
			rec := []string{row.server, row.client, row.kind, m.serverProcess(row), strconv.Itoa(row.pid), string(echoclient.Methods[j]), strconv.Itoa(r.Calls), strconv.Itoa(r.Failed()), codes}
			rec = append(rec, stats...)
			rec = append(rec, strconv.FormatFloat(r.Rate(), 'g', 6, 64),
				strconv.Itoa(m.flags.c), strconv.Itoa(m.flags.count), strconv.FormatBool(m.flags.compress))
			cw.Write(append(rec, env...))
		}
	}
	cw.Flush()
	return cw.Error()
}
