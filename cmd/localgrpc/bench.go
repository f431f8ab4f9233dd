package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/localgrpc/localgrpc/internal/bench"
	"github.com/spf13/cobra"
	"golang.org/x/perf/benchunit"
)

// benchFlags are the flags of `localgrpc bench`.
type benchFlags struct {
	count      int
	quick      bool
	workload   string
	impl       string
	benchtime  string
	strings    int
	size       int
	callers    int
	out        string
	confidence float64
	baseline   string
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Compare the ways to call a gRPC service in the same process",
		Long: `Bench runs the benchmark cases of internal/bench — by default workload W1,
ListStrings, for every impl and respSize 1, 10 and 100 — --count times each,
one round of all cases after another so that drift of a noisy machine spreads
over every impl. Each run is a testing.Benchmark call of --benchtime.

It writes the results in the Go benchmark format (to --out), then a table per
workload and parameters: each impl's median sec/op with its confidence
interval, B/op, allocs/op, and the ratio of its median to --baseline's with
the p-value of that difference, fastest first. Progress goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.quick {
				// --quick changes only what the user did not set.
				fl := cmd.Flags()
				if !fl.Changed("strings") {
					f.strings = 1000
				}
				if !fl.Changed("benchtime") {
					f.benchtime = "50ms"
				}
			}
			return f.run(cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.count, "count", "c", 5, "run each case `n` times")
	fl.BoolVar(&f.quick, "quick", false, "a fast run: --strings 1000 --benchtime 50ms unless set")
	fl.StringVar(&f.workload, "workload", "^"+bench.ListStrings+"$", "run the workloads matching `regexp` (ListStrings, Unary, PingPong)")
	fl.StringVar(&f.impl, "impl", "", "run the impls matching `regexp` (default all)")
	fl.StringVar(&f.benchtime, "benchtime", "1s", "run each case for `d`, or Nx for N ops, as go test -benchtime")
	fl.IntVar(&f.strings, "strings", 0, "strings per ListStrings call (default 10000)")
	fl.IntVar(&f.size, "size", 0, "bytes per string (default 100)")
	fl.IntVar(&f.callers, "callers", 0, "concurrent callers per op (default 1)")
	fl.StringVarP(&f.out, "out", "o", "-", "write the results in Go benchmark format to `file`; - is stdout")
	fl.Float64Var(&f.confidence, "confidence", 0.9, "confidence `level` of the intervals; 0.95 needs --count 6 or more")
	fl.StringVar(&f.baseline, "baseline", "localhost", "the `impl` the ratios compare with")
	return cmd
}

// run checks the flags, runs the selected cases and prints the results.
// Errors of the flags are returned as they are, for run's usage message;
// errors of the benchmarks as failures.
func (f *benchFlags) run(stdout, stderr io.Writer) error {
	if f.count < 1 {
		return fmt.Errorf("--count must be at least 1, not %d", f.count)
	}
	if f.strings < 0 || f.size < 0 || f.callers < 0 {
		return errors.New("--strings, --size and --callers cannot be negative")
	}
	if f.confidence <= 0 || f.confidence >= 1 {
		return fmt.Errorf("--confidence must be between 0 and 1, not %v", f.confidence)
	}
	workloads, err := regexp.Compile(f.workload)
	if err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	impls, err := regexp.Compile(f.impl)
	if err != nil {
		return fmt.Errorf("--impl: %w", err)
	}
	var cases []bench.Case
	for _, c := range bench.Cases(bench.Config{Strings: f.strings, StringSize: f.size, Callers: f.callers}) {
		if workloads.MatchString(c.Workload) && impls.MatchString(c.Impl) {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return fmt.Errorf("no case matches --workload %q --impl %q", f.workload, f.impl)
	}
	if _, err := bench.SetBenchtime(f.benchtime); err != nil {
		return fmt.Errorf("--benchtime: %w", err)
	}

	out, closeOut := stdout, func() error { return nil }
	if f.out != "-" {
		file, err := os.Create(f.out)
		if err != nil {
			return failure{err}
		}
		out, closeOut = file, file.Close
	}
	rw := &resultWriter{w: out}
	failed := f.runCases(cases, rw, stderr)
	if err := closeOut(); err != nil {
		return failure{err}
	}
	if f.out == "-" {
		fmt.Fprintln(stdout) // between the results and the table
	}

	results, err := rw.results()
	if err != nil {
		return failure{err}
	}
	if len(results) > 0 {
		if err := writeTable(stdout, results, f.baseline, f.confidence); err != nil {
			return failure{err}
		}
	}
	if failed > 0 {
		return failure{fmt.Errorf("%d of %d cases failed", failed, len(cases))}
	}
	return nil
}

// runCases runs every case f.count times, a round of all cases at a time,
// writing each result to w as it comes and progress to progress. A case
// that fails is reported and not run again. It returns how many cases
// failed.
func (f *benchFlags) runCases(cases []bench.Case, w *resultWriter, progress io.Writer) (failed int) {
	broken := make([]bool, len(cases))
	total, done := f.count*len(cases), 0
	start := time.Now()
	for round := 1; round <= f.count; round++ {
		for i, c := range cases {
			done++
			if broken[i] {
				continue
			}
			name := c.Workload + "/" + c.Name()
			r, err := c.Benchmark()
			if err != nil {
				broken[i] = true
				failed++
				fmt.Fprintf(progress, "[%d/%d] FAIL %s: %v\n", done, total, name, err)
				continue
			}
			if err := w.write(c, r); err != nil {
				fmt.Fprintf(progress, "writing results: %v\n", err)
			}
			fmt.Fprintf(progress, "[%d/%d] %s run %d: %ss/op (%s elapsed)\n", done, total, name, round,
				benchunit.Scale(float64(r.T.Nanoseconds())/float64(r.N)/1e9, benchunit.Decimal), time.Since(start).Round(time.Second))
		}
	}
	return failed
}
