package report

import (
	"strings"
	"testing"
)

// verdictOf builds a report of the given workloads (benchmark name with
// IMPL, and each impl's ns/op) over runs runs, and returns its verdict.
func verdictOf(t *testing.T, baseline string, runs int, workloads map[string]map[string]float64) []string {
	t.Helper()
	var text string
	for _, bench := range []string{"BenchmarkListStrings/impl=IMPL/respSize=10-2", "BenchmarkUnary/impl=IMPL-2", "BenchmarkUnary/impl=IMPL"} {
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
	return rep.Conclude()
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

// Every impl the verdict knows: each figure is a ratio of this report's
// medians (results makes every median 1.02 × the base), and a difference
// within noise is said to be one.
func TestVerdictEveryImpl(t *testing.T) {
	got := verdictOf(t, "localhost", 5, map[string]map[string]float64{
		listBench: {
			"localhost": 10000, "inproc-clone-isolated": 1000, "inproc-share-isolated": 500, "inproc-share-inline": 480,
			"grpchan": 3000, "grpchan-share": 300, "unix": 6250, "abstract": 10050, "direct": 10, "iter": 100, "floor": 400,
		},
		unaryBench: {
			"localhost": 50000, "inproc-clone-isolated": 2000, "inproc-share-inline": 500, "inproc-clone-inline": 510,
			"grpchan": 4000, "grpchan-share": 1500, "unix": 31250, "abstract": 30000, "direct": 10, "floor": 500,
		},
	})
	checkVerdict(t, got, []string{
		pickPrefix + "is 10–25× faster than localhost (grpc-go over TCP) in this run (ListStrings respSize=10: 10×, Unary: 25×).",
		"What is left to gain: inproc-clone-isolated is 2.5–4.0× slower than floor (the least a channel keeping inproc's contract pays through generated code) " +
			"in this run (ListStrings respSize=10: 2.5×, Unary: 4.0×).",
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

// Runs too few for a U test to tell anything apart give no ratio at all.
func TestVerdictNotSignificant(t *testing.T) {
	got := verdictOf(t, "localhost", 2, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000, "unix": 31250},
	})
	checkVerdict(t, got, []string{
		pickPrefix + "shows no significant difference from localhost (grpc-go over TCP) in this run (Unary).",
		"Across processes, unix shows no significant difference from localhost (grpc-go over TCP) in this run (Unary).",
	})
	for _, p := range got {
		if strings.Contains(p, "×") {
			t.Errorf("a ratio without significance: %s", p)
		}
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
