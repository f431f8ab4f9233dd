package main

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
	"golang.org/x/perf/benchfmt"
)

// benchPkg is the package whose benchmarks the CLI runs. Results name it,
// and the benchmarks, as `go test -bench` does, so that benchstat can
// compare results of either.
const benchPkg = "github.com/localgrpc/localgrpc/cmd/internal/bench"

// A recorder keeps the results of a run as the text `go test -bench`
// prints: configuration lines that record the environment and the
// workloads' sizes, then a line per result. That text is the run's one
// record: the benchfmt output is it verbatim, and the report is built
// from it as benchstat would read it.
type recorder struct {
	env  report.Environment
	text bytes.Buffer
}

// newRecorder returns a recorder whose text starts with env and cfg.
func newRecorder(env report.Environment, cfg bench.Config) *recorder {
	rec := &recorder{env: env}
	w := &rec.text
	for _, c := range env.Config() {
		fmt.Fprintf(w, "%s: %s\n", c.Key, c.Value)
		if c.Key == "goarch" {
			fmt.Fprintf(w, "pkg: %s\n", benchPkg)
		}
	}
	cfg = cfg.WithDefaults()
	fmt.Fprintf(w, "strings: %d\nstring-size: %d\ntext-size: %d\n", cfg.Strings, cfg.StringSize, cfg.TextSize)
	return rec
}

// add records r as the line `go test -bench` prints for case c at the
// current GOMAXPROCS.
func (rec *recorder) add(c bench.Case, r testing.BenchmarkResult) {
	fmt.Fprintf(&rec.text, "Benchmark%s\t%s\t%s\n", caseName(c, runtime.GOMAXPROCS(0)), r.String(), r.MemString())
}

// caseName is c's benchmark name without "Benchmark" at GOMAXPROCS procs,
// as `go test` names it: the suffix "-procs" unless procs is 1.
func caseName(c bench.Case, procs int) string {
	name := c.Workload + "/" + c.Name()
	if procs != 1 {
		name += "-" + strconv.Itoa(procs)
	}
	return name
}

// results parses the text, with units tidied (ns/op becomes sec/op) as
// benchstat reads it.
func (rec *recorder) results() ([]*benchfmt.Result, error) {
	var results []*benchfmt.Result
	r := benchfmt.NewReader(bytes.NewReader(rec.text.Bytes()), "results")
	for r.Scan() {
		switch rr := r.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rr.Clone()) // the reader reuses rr
		case *benchfmt.SyntaxError:
			return nil, rr
		}
	}
	return results, r.Err()
}

// report compares the recorded results.
func (rec *recorder) report(baseline string, confidence float64) (*report.Report, error) {
	results, err := rec.results()
	if err != nil {
		return nil, err
	}
	return report.Build(rec.env, results, baseline, confidence)
}
