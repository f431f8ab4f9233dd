package matrix

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
)

// WriteCSV writes a row per server, client, address and method, with the
// server's process (same as the clients' or a child, and its pid) and every
// statistic, times in seconds, and the environment in the last columns.
func (m Measurement) WriteCSV(out io.Writer) error {
	cw := csv.NewWriter(out)
	header := []string{"server", "client", "address", "server_process", "server_pid", "method", "calls", "errors", "error_codes",
		"mean_sec", "p50_sec", "p90_sec", "p99_sec", "max_sec", "calls_per_sec",
		"concurrency", "requests_per_stream", "compression", "go", "goos", "goarch", "cpu", "numcpu", "gomaxprocs"}
	for _, mod := range m.Env.Modules {
		header = append(header, mod.Name)
	}
	cw.Write(header)
	env := []string{m.Env.GoVersion, m.Env.GOOS, m.Env.GOARCH, m.Env.CPU, strconv.Itoa(m.Env.NumCPU), strconv.Itoa(m.Env.GOMAXPROCS[0])}
	for _, mod := range m.Env.Modules {
		env = append(env, mod.Version)
	}
	sec := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', 6, 64) }
	for i, row := range m.Rows {
		for j, r := range m.Results[i] {
			stats := []string{"", "", "", "", ""}
			if len(r.Latencies) > 0 {
				stats = []string{sec(r.Mean()), sec(r.Percentile(50)), sec(r.Percentile(90)), sec(r.Percentile(99)), sec(r.Latencies[len(r.Latencies)-1])}
			}
			codes := ""
			if r.Failed() > 0 {
				codes = r.ErrorCounts()
			}
			rec := []string{row.Server, row.Client, row.Kind, m.serverProcess(row), strconv.Itoa(row.PID), string(echoclient.Methods[j]), strconv.Itoa(r.Calls), strconv.Itoa(r.Failed()), codes}
			rec = append(rec, stats...)
			rec = append(rec, strconv.FormatFloat(r.Rate(), 'g', 6, 64),
				strconv.Itoa(m.Conditions.Load.C), strconv.Itoa(m.Conditions.Count), strconv.FormatBool(m.Conditions.Compress))
			cw.Write(append(rec, env...))
		}
	}
	cw.Flush()
	return cw.Error()
}
