package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// benchFlags are the flags of `localgrpc bench`.
type benchFlags struct {
	workload   string
	impl       string
	strings    int
	size       int
	callers    int
	count      int
	cpu        []int
	benchtime  string
	quick      bool
	baseline   string
	confidence float64
	untested   bool
	floorGap   bool
	format     string
	outputs    []string
	list       bool

	// command is the command line as the flags gave it, for the line
	// saying how a report was made.
	command string
	// Whether --strings and --size were given: 0 then is a value to
	// refuse, not the default.
	stringsSet, sizeSet bool
}

// maxProcsPerCPU bounds --cpu: GOMAXPROCS beyond this many times the
// machine's CPUs measures only the scheduler's overhead, and a typo's
// million would make a million Ps.
const maxProcsPerCPU = 64

// Defaults of a full run and of --quick; runtimes.go says how long each
// takes.
const (
	defaultBenchtime = "300ms"
	quickBenchtime   = "40ms"
	quickStrings     = 1000
)

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [flags]",
		Short: "Compare the ways to call a gRPC service on one machine, side by side",
		Long: `Bench runs every way to call a gRPC service locally on the same workloads and
shows which is fastest, by how much, and what each costs in memory.

Workloads: ListStrings, a server stream of --strings strings of --size
bytes, 1, 10 or 100 strings per message (respSize); Unary, one small Echo Get;
PingPong, one Send and Recv on an open bidirectional stream; FanOut, the
ListStrings stream (10 strings per message) through a fanout.Proxy in front of
1 or 4 backends (backends=N) that share the strings and the proxy merges back in
order: beside ListStrings respSize=10 it shows what the proxy costs; Batching,
the book store of "gRPC Streaming the Right Way", --strings books of one author
sent one per message (batch=1) or 64 to a message with package batch (batch=64);
Series, Thanos's Store API on gogoproto messages (their own Marshal, Unmarshal
and Size): 10,000 series of one sample or 1,000 of 120, one series per message,
where iter is Thanos's own in-process client. The impls without a connection
(chan, iter, direct, floor) take no part in FanOut and Batching, and of them only
iter in Series; connect-go's take part in ListStrings, Unary and PingPong.

Impls: grpc-go over TCP (localhost), unix and abstract sockets and bufconn;
fullstorydev/grpchan, copying (grpchan) or sharing (grpchan-share) messages;
hand-written goroutine+channel (chan) and iter.Pull2 (iter) clients; the handler
called directly (direct); the least any channel keeping inproc's contract must
pay (floor: for ListStrings the generated Recv's new message and field copy, for
Unary a go statement and one channel hand-off back); this project's inproc
channel in each copy mode (clone, share) and execution mode (isolated, inline);
connect-go's handlers and clients (gRPC protocol, no compression) in-process
through inprochttp (connect-inproc) and over a unix socket (connect-unix); and,
on Linux, with the server in a process of its own (this program, started again):
grpc-go over a unix and an abstract socket (xproc-unix, xproc-abstract),
localgrpc's shm: transport (xproc-shm), and the machine's floor between two
processes, one round trip of the Echo text with no gRPC at all, over a unix
socketpair (xproc-floor-socketpair) and through a shared-memory ring each way
woken by an eventfd (xproc-floor-ring), in Unary only. The xproc impls take no
part in FanOut, Batching and Series.

Each case runs --count times, a round of every case at a time so that a noisy
machine's drift spreads over all of them; each run is a benchmark of --benchtime,
the same code as go test -bench . ./cmd/internal/bench. The report gives, per workload,
each impl's median time per op with its confidence interval, B/op, allocs/op and
the ratio to --baseline with a Mann-Whitney p-value, fastest first: the
statistics of golang.org/x/perf, as benchstat computes them. It opens with a
verdict drawn from those figures (what to pick, by how much, and where the
difference is not significant; --floor-gap adds what is left to gain against
the floors) and the run's settings, says what share of rows is noisy, and
marks with ! a row whose interval overlaps the baseline's or that of the row
just above or below it: distrust that ratio or that order.

--count must give the statistics runs enough: a Mann-Whitney U test (p < 0.05)
can tell two impls apart only with 4 runs or more, and the intervals need 5 at
--confidence 0.9 (the default), 6 at 0.95, 8 at 0.99. A smaller --count is
refused before anything runs, unless --untested asks for a table without them:
its verdict says where it cannot tell, and gives the medians' ratios marked
untested. A run cut short (Ctrl-C) is judged the same way, group by group.

Flags take one dash or two, as go test's do (-count 5, --count 5).
Interrupting a run (Ctrl-C) reports the runs that finished.`,
		Example: `  localgrpc bench                                # everything, ` + fullBenchTakes + ` on 2 CPUs
  localgrpc bench --quick                        # a rough picture in ` + quickBenchTakes + `
  localgrpc bench --workload Unary --impl 'inproc|grpchan' --cpu 1,2
  localgrpc bench --strings 1000 --size 4096 -c 4 -o report.html -o results.txt
  localgrpc bench --count 6 --format benchfmt > new.txt && benchstat -col /impl new.txt   # benchstat's 95% intervals need 6 runs
  localgrpc bench --quick --count 2 --untested    # a glance: medians, no intervals nor tests`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.stringsSet, f.sizeSet = cmd.Flags().Changed("strings"), cmd.Flags().Changed("size")
			f.command = commandLine(cmd)
			if f.quick {
				// --quick changes only what the user did not set.
				fl := cmd.Flags()
				if !fl.Changed("strings") {
					f.strings = quickStrings
				}
				if !fl.Changed("benchtime") {
					f.benchtime = quickBenchtime
				}
			}
			return f.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.workload, "workload", "", "run the workloads matching `regexp`: ListStrings, Unary, PingPong, FanOut, Batching, Series (default all)")
	fl.StringVar(&f.impl, "impl", "", "run the impls matching `regexp` (default all; see --list)")
	fl.IntVar(&f.strings, "strings", 0, "strings per ListStrings call and FanOut stream, books per Batching call (default 10000);\na run that would not fit in the memory available is refused")
	fl.IntVar(&f.size, "size", 0, "bytes per string in ListStrings and FanOut and per Echo text in Unary and PingPong (default 100 and 5)")
	fl.IntVarP(&f.callers, "callers", "c", 1, "`n` callers calling at once, each again as soon as its call returns: time/op is then the time per call under that load")
	fl.IntVar(&f.count, "count", 5, "run each case `n` times")
	fl.IntSliceVar(&f.cpu, "cpu", []int{runtime.GOMAXPROCS(0)}, "run each case with each GOMAXPROCS in `list`, as go test -cpu; at most 64× the machine's CPUs")
	fl.StringVar(&f.benchtime, "benchtime", defaultBenchtime, "run each case for `d`, or Nx for exactly N ops, as go test -benchtime")
	fl.BoolVar(&f.quick, "quick", false, "a rough, fast run: --strings 1000 --benchtime 40ms unless set")
	fl.StringVar(&f.baseline, "baseline", "localhost", "the `impl` ratios compare with; it runs even if --impl leaves it out")
	fl.Float64Var(&f.confidence, "confidence", 0.9, "confidence `level` of the intervals; 0.95 needs --count 6 or more, 0.99 --count 8")
	fl.BoolVar(&f.untested, "untested", false, "run even with a --count too small for the intervals (±∞) and the U test (4 runs):\nthe verdict then gives the medians' ratios marked untested")
	fl.BoolVar(&f.floorGap, "floor-gap", false, "also say in the text verdict what is left to gain against the floors (for maintainers;\n-o FILE.html, .md, .json and .csv always say it)")
	fl.StringVarP(&f.format, "format", "f", "text", "format of standard output: text, markdown, csv (the table alone; -o FILE.csv also writes FILE.context.csv with the verdict, settings and environment), json or benchfmt (the Go benchmark format)")
	fl.StringArrayVarP(&f.outputs, "output", "o", nil, "also write the report to `file`, in the format its extension names:\n.html (a page with charts), .svg (the charts), .json, .csv, .md,\nor .txt (the Go benchmark format, for benchstat); repeatable")
	fl.BoolVar(&f.list, "list", false, "list the cases the other flags select, and run nothing")
	return cmd
}

// run checks the flags, runs the selected cases and writes the report.
// Errors of the flags are returned as they are, for run's usage message;
// errors of the work as failures.
func (f *benchFlags) run(ctx context.Context, stdout, stderr io.Writer) error {
	cases, err := f.cases()
	if err != nil {
		return err
	}
	if err := checkFormat(f.format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if f.count < 1 {
		return fmt.Errorf("--count must be at least 1, not %d", f.count)
	}
	for _, p := range f.cpu {
		if p < 1 {
			return fmt.Errorf("--cpu: GOMAXPROCS must be at least 1, not %d", p)
		}
		if most := maxProcsPerCPU * runtime.NumCPU(); p > most {
			return fmt.Errorf("--cpu %d: GOMAXPROCS can be at most %d× this machine's %d CPUs, %d", p, maxProcsPerCPU, runtime.NumCPU(), most)
		}
	}
	if f.confidence <= 0 || f.confidence >= 1 {
		return fmt.Errorf("--confidence must be between 0 and 1, not %v", f.confidence)
	}
	if err := f.checkRuns(); err != nil {
		return err
	}
	if _, err := bench.SetBenchtime(f.benchtime); err != nil {
		return fmt.Errorf("--benchtime %q is neither a duration (300ms) nor a count of ops (100x)", f.benchtime)
	}
	if f.list {
		for _, c := range cases {
			fmt.Fprintf(stdout, "Benchmark%s/%s\n", c.Workload, c.Name())
		}
		return nil
	}
	estimate := memoryEstimate(cases, f.config())
	if avail, err := memAvailable(); err == nil {
		if err := checkMemory(estimate, avail); err != nil {
			return err
		}
	} else if estimate > 1<<30 {
		fmt.Fprintf(stderr, "localgrpc: note: the run may hold about %s in memory; not checked against what this machine has available (%v)\n",
			formatBytes(estimate), err)
	}
	outs, err := createOutputs(f.outputs)
	if err != nil {
		return err
	}

	env := report.CurrentEnvironment(f.cpu)
	rec := newRecorder(env, f.config())
	prog := newProgress(stderr, len(cases)*len(f.cpu), f.count, benchtimeEstimate(f.benchtime))
	failed, ran := f.runCases(ctx, cases, rec, prog)
	prog.finish()

	var errs []error
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d of %d cases failed; the report leaves them out", failed, len(cases)*len(f.cpu)))
	}
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("interrupted after %d of %d runs; the report holds those", ran, prog.total))
	}
	if ran > 0 {
		rep, err := rec.report(f.baseline, f.confidence)
		if err != nil {
			return failure{err}
		}
		rep.Settings = f.settings()
		rep.Verdict = rep.Conclude()
		rep.FloorGap = rep.LeftToGain()
		rep.Made = fmt.Sprintf("Made by %s on %s, on %s.", f.command, time.Now().UTC().Format(time.DateOnly), env.Summary())
		// Files first: a closed pipe on stdout must not lose them.
		errs = append(errs, outs.write(rep, rec))
		shown := rep
		if f.format == formatText && !f.floorGap {
			// The terminal's reader picks an impl; the floors are for
			// whoever optimizes one.
			short := *rep
			short.FloorGap = nil
			shown = &short
		}
		if err := writeFormat(stdout, f.format, shown, rec); err != nil {
			errs = append(errs, fmt.Errorf("writing the report: %w", err))
		}
	} else {
		outs.discard()
	}
	if err := errors.Join(errs...); err != nil {
		return failure{err}
	}
	return nil
}

// cases returns the cases the flags select, the baseline's included, or a
// usage error that says what matches nothing.
func (f *benchFlags) cases() ([]bench.Case, error) {
	if f.strings < 0 || f.size < 0 {
		return nil, errors.New("--strings and --size cannot be negative")
	}
	// 0 is the defaults' value inside, but given, it means nothing to run.
	if f.stringsSet && f.strings == 0 {
		return nil, errors.New("--strings 0: a call must return at least 1 string; leave --strings out for the default, 10000")
	}
	if f.sizeSet && f.size == 0 {
		return nil, errors.New("--size 0: a string or Echo text must have at least 1 byte; leave --size out for the defaults, 100 and 5")
	}
	if f.callers < 1 {
		return nil, fmt.Errorf("--callers must be at least 1, not %d", f.callers)
	}
	workloads, err := regexp.Compile(f.workload)
	if err != nil {
		return nil, fmt.Errorf("--workload: %w", err)
	}
	impls, err := regexp.Compile(f.impl)
	if err != nil {
		return nil, fmt.Errorf("--impl: %w", err)
	}
	known := bench.Impls()
	if !slices.Contains(known, f.baseline) {
		return nil, fmt.Errorf("--baseline %q is not an impl; the impls are %s", f.baseline, strings.Join(known, ", "))
	}
	if !slices.ContainsFunc(bench.Workloads(), workloads.MatchString) {
		return nil, fmt.Errorf("--workload %q matches no workload; they are %s", f.workload, strings.Join(bench.Workloads(), ", "))
	}
	if !slices.ContainsFunc(known, impls.MatchString) {
		return nil, fmt.Errorf("--impl %q matches no impl; they are %s", f.impl, strings.Join(known, ", "))
	}
	var cases []bench.Case
	for _, c := range bench.Cases(f.config()) {
		if workloads.MatchString(c.Workload) && (impls.MatchString(c.Impl) || c.Impl == f.baseline) {
			cases = append(cases, c)
		}
	}
	return cases, nil
}

// config is the workloads' sizes as the flags give them.
func (f *benchFlags) config() bench.Config {
	return bench.Config{Strings: f.strings, StringSize: f.size, TextSize: f.size, Callers: f.callers}
}

// runCases runs every case with every GOMAXPROCS f.count times, a round of
// all of them at a time, recording each result. A case that fails is
// reported and not run again. It stops early when ctx ends and returns how
// many cases failed and how many runs were recorded.
func (f *benchFlags) runCases(ctx context.Context, cases []bench.Case, rec *recorder, prog *progress) (failed, ran int) {
	type unit struct {
		c     bench.Case
		procs int
	}
	var units []unit
	for _, c := range cases {
		for _, p := range f.cpu {
			units = append(units, unit{c, p})
		}
	}
	broken := make([]bool, len(units))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for round := 1; round <= f.count; round++ {
		for i, u := range units {
			if ctx.Err() != nil {
				return failed, ran
			}
			name := caseName(u.c, u.procs)
			if broken[i] {
				prog.skip(i)
				continue
			}
			prog.start(i, name, round)
			runtime.GOMAXPROCS(u.procs)
			r, err := u.c.Benchmark()
			if err != nil {
				broken[i] = true
				failed++
				prog.fail(i, err)
				continue
			}
			rec.add(u.c, r)
			ran++
			prog.done(i, perOp(r))
		}
	}
	return failed, ran
}

// checkRuns refuses a --count too small for the statistics at
// --confidence, before anything runs, unless --untested: the run would
// take its full time only to print ±∞ intervals and a verdict that cannot
// tell anything apart.
func (f *benchFlags) checkRuns() error {
	uTest, interval := report.UTestRuns(), report.IntervalRuns(f.confidence)
	need := max(uTest, interval)
	if f.count >= need || f.untested {
		return nil
	}
	return fmt.Errorf("--count %d is too few at --confidence %v: telling impls apart needs %d runs and intervals at that confidence %d; "+
		"use --count %d, or --untested for medians without intervals or tests", f.count, f.confidence, uTest, interval, need)
}

// benchtimeEstimate is how long one run of --benchtime d should take, for
// the progress estimate before the first run ends; 0 for "Nx", which says
// nothing about time.
func benchtimeEstimate(d string) time.Duration {
	t, err := time.ParseDuration(d)
	if err != nil {
		return 0
	}
	return t
}

// commandLine is cmd's command line as its flags were given: "localgrpc
// bench --quick --count 6", each value quoted where a shell would need it.
func commandLine(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		values := []string{fl.Value.String()}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		for _, v := range values {
			if fl.Value.Type() == "bool" {
				parts = append(parts, "--"+fl.Name)
				if v != "true" {
					parts[len(parts)-1] += "=" + v
				}
				continue
			}
			if strings.ContainsAny(v, " |()[]*?$^\\'\"&;<>") {
				v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
			}
			parts = append(parts, "--"+fl.Name, v)
		}
	})
	return strings.Join(parts, " ")
}
