package report

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// verdictOf builds a report of the given workloads (benchmark name with
// IMPL, and each impl's ns/op) over runs runs, and returns its verdict.
func verdictOf(t *testing.T, baseline string, runs int, workloads map[string]map[string]float64) []string {
	t.Helper()
	return reportOf(t, baseline, runs, workloads).Conclude()
}

// reportOf builds the report verdictOf concludes from.
func reportOf(t *testing.T, baseline string, runs int, workloads map[string]map[string]float64) *Report {
	t.Helper()
	var text string
	for _, bench := range []string{"BenchmarkListStrings/impl=IMPL/respSize=1-2", "BenchmarkListStrings/impl=IMPL/respSize=10-2", "BenchmarkUnary/impl=IMPL-2", "BenchmarkUnary/impl=IMPL"} {
		times, ok := workloads[bench]
		if !ok {
			continue
		}
		var order []string
		for _, k := range implKinds { // a fixed order
			if _, ok := times[k.name]; ok {
				order = append(order, k.name)
			}
		}
		text += results(bench, times, order, runs)
	}
	rep, err := Build(testEnv, parse(t, text), baseline, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkVerdict fails t unless got is want, paragraph by paragraph.
func checkVerdict(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d paragraphs, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("paragraph %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

const (
	listBench  = "BenchmarkListStrings/impl=IMPL/respSize=10-2"
	unaryBench = "BenchmarkUnary/impl=IMPL-2"
	pickPrefix = "For calls within one process, pick inproc-clone-isolated, inproc's default " +
		"(Clone copies every message, Isolated runs each handler on its own goroutine: safe for any handler): it "
)

// everyImplReport is a report of every impl the verdict knows, in
// ListStrings respSize=10 and Unary.
func everyImplReport(t *testing.T) *Report {
	t.Helper()
	return reportOf(t, "localhost", 5, map[string]map[string]float64{
		listBench: {
			"localhost": 10000, "inproc-clone-isolated": 1000, "inproc-share-isolated": 500, "inproc-share-inline": 480,
			"grpchan": 3000, "grpchan-share": 300, "unix": 6250, "abstract": 10050, "direct": 10, "iter": 100, "floor": 400,
		},
		unaryBench: {
			"localhost": 50000, "inproc-clone-isolated": 2000, "inproc-share-inline": 500, "inproc-clone-inline": 510,
			"grpchan": 4000, "grpchan-share": 1500, "unix": 31250, "abstract": 30000, "direct": 10, "floor": 500,
		},
	})
}

// Every impl the verdict knows: each figure is a ratio of this report's
// medians (results makes every median 1.02 × the base), and a difference
// within noise is said to be one.
func TestVerdictEveryImpl(t *testing.T) {
	rep := everyImplReport(t)
	checkVerdict(t, rep.LeftToGain(), []string{
		"What is left to gain: inproc-clone-isolated is 2.5–4.0× slower than floor (the least a channel keeping inproc's contract pays through generated code) " +
			"in this run (ListStrings respSize=10: 2.5×, Unary: 4.0×).",
	})
	checkVerdict(t, rep.Conclude(), []string{
		pickPrefix + "is 10–25× faster than localhost (grpc-go over TCP) in this run (ListStrings respSize=10: 10×, Unary: 25×).",
		"Where their rules hold (see the inproc docs), inproc's other modes can go further: the fastest of those run " +
			"(inproc-share-isolated, inproc-clone-inline, inproc-share-inline) is 2.1–4.0× faster than inproc-clone-isolated (the default) " +
			"in this run (ListStrings respSize=10: inproc-share-inline 2.1×, Unary: inproc-share-inline 4.0×).",
		"Against another in-process channel, inproc-clone-isolated is 2.0–3.0× faster than grpchan (fullstorydev/grpchan, copying messages) " +
			"in this run (ListStrings respSize=10: 3.0×, Unary: 2.0×).",
		"Against another in-process channel, the fastest of inproc-share-isolated and inproc-share-inline is faster than grpchan-share " +
			"(grpchan sharing messages) in 1 workload (3.0×) and slower in 1 (1.6×) in this run " +
			"(ListStrings respSize=10: inproc-share-inline 1.6× slower, Unary: inproc-share-inline 3.0× faster).",
		"Across processes, unix is 1.6× faster than localhost (grpc-go over TCP) in this run (ListStrings respSize=10: 1.6×, Unary: 1.6×); " +
			"abstract is 1.7× faster than localhost (grpc-go over TCP) in this run (Unary: 1.7×; no significant difference in ListStrings respSize=10).",
	})
}

// A figure's label names its workload unless the figure before it did:
// the groups without a significant difference are listed apart, so
// they cannot lend their workload to a figure, nor take it from one.
func TestVerdictLabelsNameTheirWorkload(t *testing.T) {
	rep := reportOf(t, "localhost", 5, map[string]map[string]float64{
		"BenchmarkListStrings/impl=IMPL/respSize=1-2": {"localhost": 10000, "unix": 10050},
		listBench:  {"localhost": 10000, "unix": 6250},
		unaryBench: {"localhost": 50000, "unix": 31250},
	})
	got := rep.Conclude()
	want := "Across processes, unix is 1.6× faster than localhost (grpc-go over TCP) in this run " +
		"(ListStrings respSize=10: 1.6×, Unary: 1.6×; no significant difference in ListStrings respSize=1)."
	if len(got) == 0 || got[len(got)-1] != want {
		t.Errorf("verdict:\n%s\nwant its last paragraph:\n%s", strings.Join(got, "\n"), want)
	}
	if b := rep.choices()[len(got)-1].item().brief(); b != "Across processes, unix is 1.6× faster than localhost (grpc-go over TCP) in this run (no significant difference in 1 of 3 workloads)." {
		t.Errorf("Brief: %s", b)
	}
}

// connect-go in-process is compared with connect-go over a socket, in a
// paragraph of its own.
func TestVerdictConnect(t *testing.T) {
	got := verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "connect-inproc": 10000, "connect-unix": 40000},
	})
	checkVerdict(t, got, []string{
		"This run has no inproc impl, so it says nothing of calls within one process.",
		"For connect-go's handlers, or any other http.Handler, connect-inproc (connect-go in-process through inprochttp) is 4.0× faster than " +
			"connect-unix (connect-go over a unix socket) in this run (Unary: 4.0×).",
	})
}

// With the server in another process, shm: is compared with grpc-go over
// a unix socket, then with each floor between two processes.
func TestVerdictBetweenProcesses(t *testing.T) {
	rep := reportOf(t, "localhost", 5, map[string]map[string]float64{
		listBench:  {"xproc-unix": 100000, "xproc-abstract": 98000, "xproc-shm": 40000},
		unaryBench: {"xproc-unix": 80000, "xproc-shm": 20000, "xproc-floor-ring": 10000, "xproc-floor-socketpair": 16000},
	})
	checkVerdict(t, rep.Conclude(), []string{
		"This run has no inproc impl, so it says nothing of calls within one process.",
		"Between processes on one machine, pick xproc-shm (localgrpc's shm: transport, the server in another process): it is 2.5–4.0× faster than " +
			"xproc-unix (grpc-go over a unix socket, the server in another process) in this run (ListStrings respSize=10: 2.5×, Unary: 4.0×).",
	})
	checkVerdict(t, rep.LeftToGain(), []string{
		"Against the machine's floor between two processes, xproc-shm is 2.0× slower than xproc-floor-ring " +
			"(a shared-memory ring each way, woken by an eventfd: no gRPC) in this run (Unary: 2.0×).",
		"Against the machine's floor between two processes, xproc-shm is 1.2× slower than xproc-floor-socketpair " +
			"(a unix socketpair round trip: no gRPC) in this run (Unary: 1.2×).",
	})
}

// A run filtered to a few impls: the verdict speaks of those alone.
func TestVerdictFiltered(t *testing.T) {
	got := verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "unix": 31250},
	})
	checkVerdict(t, got, []string{
		"This run has no inproc impl, so it says nothing of calls within one process.",
		"Across processes, unix is 1.6× faster than localhost (grpc-go over TCP) in this run (Unary: 1.6×).",
	})

	got = verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000},
	})
	checkVerdict(t, got, []string{pickPrefix + "is 25× faster than localhost (grpc-go over TCP) in this run (Unary: 25×)."})

	got = verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-share-inline": 500},
	})
	checkVerdict(t, got, []string{
		"This run has no inproc-clone-isolated, so it says nothing of inproc's default; the fastest of the modes it ran " +
			"(inproc-share-inline), which need their rules to hold (see the inproc docs), is 100× faster than localhost " +
			"(grpc-go over TCP) in this run (Unary: 100×).",
	})

	// A rival with one of its counterparts run.
	got = verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-share-inline": 500, "grpchan-share": 1500, "grpchan": 4000},
	})
	checkVerdict(t, got, []string{
		"This run has no inproc-clone-isolated, so it says nothing of inproc's default; the fastest of the modes it ran " +
			"(inproc-share-inline), which need their rules to hold (see the inproc docs), is 100× faster than localhost " +
			"(grpc-go over TCP) in this run (Unary: 100×).",
		"Against another in-process channel, inproc-share-inline is 3.0× faster than grpchan-share (grpchan sharing messages) in this run (Unary: 3.0×).",
	})

	got = verdictOf(t, "grpchan", 5, map[string]map[string]float64{
		unaryBench: {"grpchan": 4000, "abstract": 30000},
	})
	checkVerdict(t, got, []string{
		"This run has no inproc impl, so it says nothing of calls within one process.",
		"Across processes, this run has no TCP (localhost) to compare abstract with.",
	})
}

// checkCannotTell fails t unless paragraph p says that it cannot tell
// with the runs it had, how many are needed, and gives the medians' ratio
// want marked untested, and unless it claims no (in)significance.
func checkCannotTell(t *testing.T, p, runs, want string) {
	t.Helper()
	for _, s := range []string{"cannot tell with " + runs, fmt.Sprintf("%d or more are needed", UTestRuns()), "untested", want} {
		if !strings.Contains(p, s) {
			t.Errorf("no %q in %s", s, p)
		}
	}
	for _, s := range []string{"no significant difference", "shows no", "is " + want} {
		if strings.Contains(p, s) {
			t.Errorf("%q claims what the runs could not test: %s", s, p)
		}
	}
}

// With runs too few for a U test to tell anything apart (3, as
// `bench --count 3 --untested` makes), the verdict says it cannot tell,
// rather than "no significant difference", and gives the medians' ratios
// marked untested.
func TestVerdictTooFewRuns(t *testing.T) {
	got := verdictOf(t, "localhost", 3, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000, "unix": 31250},
	})
	if len(got) != 2 {
		t.Fatalf("%d paragraphs, want 2:\n%s", len(got), strings.Join(got, "\n"))
	}
	checkCannotTell(t, got[0], "3 runs", "25× faster")
	checkCannotTell(t, got[1], "3 runs", "1.6× faster")
}

// A run interrupted midway has groups of enough runs and groups of too
// few: the first are tested, the others said to be untested.
func TestVerdictInterrupted(t *testing.T) {
	impls := []string{"localhost", "inproc-clone-isolated"}
	text := results(unaryBench, map[string]float64{"localhost": 50000, "inproc-clone-isolated": 2000}, impls, 5) +
		results(listBench, map[string]float64{"localhost": 10000, "inproc-clone-isolated": 1000}, impls, 2)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Conclude()
	if !strings.HasPrefix(got[0], pickPrefix+"is 25× faster than localhost (grpc-go over TCP) in this run (Unary: 25×)") {
		t.Errorf("the tested group is not stated as tested: %s", got[0])
	}
	_, untested, ok := strings.Cut(got[0], "was not tested in ListStrings respSize=10: ")
	if !ok {
		t.Fatalf("the untested group is not named: %s", got[0])
	}
	checkCannotTell(t, untested, "2 runs", "10× faster")

	// Rows of one group with unequal runs: the fewer count.
	text = results(unaryBench, map[string]float64{"localhost": 50000}, impls[:1], 3) +
		results(unaryBench, map[string]float64{"inproc-clone-isolated": 2000}, impls[1:], 2)
	if rep, err = Build(testEnv, parse(t, text), "localhost", 0.9); err != nil {
		t.Fatal(err)
	}
	checkCannotTell(t, rep.Conclude()[0], "2 runs", "25× faster")
}

// The fewest runs are benchmath's: benchstat's "need >= 4 samples to
// detect a difference" and "need >= 6 samples for confidence interval at
// level 0.95".
func TestFewestRuns(t *testing.T) {
	if got := UTestRuns(); got != 4 {
		t.Errorf("UTestRuns() = %d, want 4", got)
	}
	for _, tc := range []struct {
		confidence float64
		want       int
	}{{0.9, 5}, {0.95, 6}, {0.99, 8}} {
		if got := IntervalRuns(tc.confidence); got != tc.want {
			t.Errorf("IntervalRuns(%v) = %d, want %d", tc.confidence, got, tc.want)
		}
	}
	if canDiffer(3, 3) || !canDiffer(4, 4) || canDiffer(1, 100) || !canDiffer(3, 10) {
		t.Error("canDiffer disagrees with the U test's least p-values")
	}
}

// Without the baseline's results, or with an inproc mode as the baseline,
// the verdict says what it cannot compare, and compares what it can.
func TestVerdictBaseline(t *testing.T) {
	got := verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"inproc-clone-isolated": 2000, "grpchan": 4000},
	})
	checkVerdict(t, got, []string{
		pickPrefix + "cannot be compared: this run has no localhost (grpc-go over TCP) in the same workloads.",
		"Against another in-process channel, inproc-clone-isolated is 2.0× faster than grpchan (fullstorydev/grpchan, copying messages) in this run (Unary: 2.0×).",
	})

	// The default compared with itself would say nothing: TCP instead.
	got = verdictOf(t, "inproc-clone-isolated", 5, map[string]map[string]float64{
		unaryBench: {"inproc-clone-isolated": 2000, "localhost": 50000},
	})
	checkVerdict(t, got, []string{pickPrefix + "is 25× faster than localhost (grpc-go over TCP) in this run (Unary: 25×)."})
	got = verdictOf(t, "inproc-share-inline", 5, map[string]map[string]float64{
		unaryBench: {"inproc-clone-isolated": 2000, "inproc-share-inline": 500},
	})
	checkVerdict(t, got, []string{
		pickPrefix + "cannot be compared: this run has no baseline outside inproc.",
		"Where their rules hold (see the inproc docs), inproc's other modes can go further: the fastest of those run " +
			"(inproc-share-inline) is 4.0× faster than inproc-clone-isolated (the default) in this run (Unary: 4.0×).",
	})

	// A yardstick as the baseline: the pick is slower, and the verdict says so.
	got = verdictOf(t, "direct", 5, map[string]map[string]float64{
		unaryBench: {"inproc-clone-isolated": 2000, "direct": 10},
	})
	checkVerdict(t, got, []string{pickPrefix + "is 200× slower than direct in this run (Unary: 200×)."})
}

// Faster in one workload and slower in another: both, with their figures.
func TestVerdictMixed(t *testing.T) {
	got := verdictOf(t, "localhost", 5, map[string]map[string]float64{
		listBench:  {"localhost": 10000, "unix": 20000},
		unaryBench: {"localhost": 50000, "unix": 25000},
	})
	checkVerdict(t, got, []string{
		"This run has no inproc impl, so it says nothing of calls within one process.",
		"Across processes, unix is faster than localhost (grpc-go over TCP) in 1 workload (2.0×) and slower in 1 (2.0×) " +
			"in this run (ListStrings respSize=10: 2.0× slower, Unary: 2.0× faster).",
	})
}

// Groups of several GOMAXPROCS are told apart.
func TestVerdictGOMAXPROCS(t *testing.T) {
	got := verdictOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench:                 {"localhost": 50000, "inproc-clone-isolated": 2000},
		"BenchmarkUnary/impl=IMPL": {"localhost": 40000, "inproc-clone-isolated": 2000},
	})
	checkVerdict(t, got, []string{
		pickPrefix + "is 20–25× faster than localhost (grpc-go over TCP) in this run (Unary GOMAXPROCS 2: 25×, GOMAXPROCS 1: 20×).",
	})
}

func TestFormatTimes(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{1.02, "1.02×"}, {1.5, "1.5×"}, {9.94, "9.9×"}, {9.96, "10×"}, {118.4, "118×"}} {
		if got := formatTimes(tc.x); got != tc.want {
			t.Errorf("formatTimes(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
	if got := span([]float64{5.8, 36, 12}); got != "5.8–36×" {
		t.Errorf("span = %q", got)
	}
	if got := span([]float64{2.01, 1.98}); got != "2.0×" {
		t.Errorf("span of equal figures = %q", got)
	}
}

func TestShorten(t *testing.T) {
	got := strings.Join(shorten([]string{"ListStrings respSize=1", "ListStrings respSize=10", "Unary", "PingPong", "PingPong callers=4"}), ", ")
	if want := "ListStrings respSize=1, respSize=10, Unary, PingPong, callers=4"; got != want {
		t.Errorf("shorten: %q, want %q", got, want)
	}
}

// The batching verdict compares each impl's own two groups, batch=1 and
// batch=64, and says where they do not differ.
func TestVerdictBatching(t *testing.T) {
	text := results("BenchmarkBatching/impl=IMPL/batch=1-2", map[string]float64{"localhost": 30000, "unix": 29000, "inproc-clone-isolated": 3000}, []string{"localhost", "unix", "inproc-clone-isolated"}, 5) +
		results("BenchmarkBatching/impl=IMPL/batch=64-2", map[string]float64{"localhost": 10000, "unix": 29000, "inproc-clone-isolated": 1500}, []string{"localhost", "unix", "inproc-clone-isolated"}, 5)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	want := "Batching: sending 64 items a message instead of one (Batching) makes inproc-clone-isolated 2×, localhost 3× as fast " +
		"and makes no significant difference to unix in this run (package batch does it for any stream)."
	if got := rep.batching(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Batching groups with too few runs: untested, not "no significant
// difference".
func TestVerdictBatchingTooFewRuns(t *testing.T) {
	impls := []string{"localhost", "unix"}
	text := results("BenchmarkBatching/impl=IMPL/batch=1-2", map[string]float64{"localhost": 30000, "unix": 29000}, impls, 3) +
		results("BenchmarkBatching/impl=IMPL/batch=64-2", map[string]float64{"localhost": 10000, "unix": 29000}, impls, 3)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	got := rep.batching()
	for _, s := range []string{"cannot tell with 3 runs", "untested", "localhost 3×"} {
		if !strings.Contains(got, s) {
			t.Errorf("no %q in %s", s, got)
		}
	}
	if strings.Contains(got, "no significant difference") {
		t.Errorf("claims what the runs could not test: %s", got)
	}
}

// The terminal's verdict gives each finding's range, not every
// workload's figure, and says where some showed no difference; what is
// left to gain shows only when the report has it.
func TestTextVerdict(t *testing.T) {
	every := everyImplReport(t).choices()
	sockets := reportOf(t, "localhost", 5, map[string]map[string]float64{unaryBench: {"localhost": 50000, "unix": 50250}}).choices()
	for _, tc := range []struct {
		c       choice
		p, want string
	}{
		{every[0], pickPrefix + "is 10–25× faster than localhost (grpc-go over TCP) in this run (ListStrings respSize=10: 10×, Unary: 25×).",
			pickPrefix + "is 10–25× faster than localhost (grpc-go over TCP) in this run."},
		{every[len(every)-1], "Across processes, unix is 1.6× faster than localhost (grpc-go over TCP) in this run (ListStrings respSize=10: 1.6×, Unary: 1.6×); " +
			"abstract is 1.7× faster than localhost (grpc-go over TCP) in this run (Unary: 1.7×; no significant difference in ListStrings respSize=10).",
			"Across processes, unix is 1.6× faster than localhost (grpc-go over TCP) in this run; " +
				"abstract is 1.7× faster than localhost (grpc-go over TCP) in this run (no significant difference in 1 of 2 workloads)."},
		{sockets[1], "Across processes, unix shows no significant difference from localhost (grpc-go over TCP) in this run (Unary).",
			"Across processes, unix shows no significant difference from localhost (grpc-go over TCP) in this run."},
		{sockets[0], "This run has no inproc impl, so it says nothing of calls within one process.",
			"This run has no inproc impl, so it says nothing of calls within one process."},
	} {
		if got := tc.c.paragraph(); got != tc.p {
			t.Errorf("paragraph\n got %s\nwant %s", got, tc.p)
		}
		if got := tc.c.item().brief(); got != tc.want {
			t.Errorf("brief of %q\n got %s\nwant %s", tc.p, got, tc.want)
		}
	}

	rep := reportOf(t, "localhost", 5, map[string]map[string]float64{
		listBench:  {"localhost": 10000, "inproc-clone-isolated": 1000, "floor": 400, "unix": 6250},
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000, "floor": 500, "unix": 31250},
	})
	rep.Verdict = rep.Conclude()
	text := func() string {
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := text()
	verdict := strings.Join(strings.Fields(got[strings.LastIndex(got, "\n\n"):]), " ")
	for _, banned := range []string{"ListStrings respSize=10: ", "Unary: ", "left to gain", "floor"} {
		if strings.Contains(verdict, banned) {
			t.Errorf("the default verdict has %q:\n%s", banned, verdict)
		}
	}
	for _, want := range []string{"10–25× faster than localhost", "1.6× faster than localhost"} {
		if !strings.Contains(verdict, want) {
			t.Errorf("the default verdict lacks %q:\n%s", want, verdict)
		}
	}
	rep.FloorGap = rep.LeftToGain()
	if got := text(); !strings.Contains(got, "left to gain against the floors:\n  - What is left to gain: inproc-clone-isolated is 2.5–4.0× slower than floor") {
		t.Errorf("the floor gap is not shown when the report has it:\n%s", got)
	}
	// The page and the markdown show it with its figures.
	for name, write := range map[string]func(io.Writer) error{"html": rep.WriteHTML, "markdown": rep.WriteMarkdown} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "What is left to gain") || !strings.Contains(b.String(), "2.5") {
			t.Errorf("%s lacks the floor gap", name)
		}
	}
}
