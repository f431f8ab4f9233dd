package report

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// figureRE finds the figures of a line: "1.8–46× faster", "2.3× slower",
// "1.5×".
var figureRE = regexp.MustCompile(`\d[\d.]*(?:–\d[\d.]*)?×(?: (?:faster|slower))?`)

// checkAnswer fails t unless rep's answer is want, line by line under its
// header, and unless it keeps the rules of every answer: no line wider
// than the terminal, no workload named (their figures are the tables'),
// and no figure that Conclude's paragraphs do not give.
func checkAnswer(t *testing.T, rep *Report, want []string) {
	t.Helper()
	got := rep.answer(textWidth)
	if len(got) == 0 || got[0] != answerHeader {
		t.Fatalf("the answer does not open with its header:\n%s", strings.Join(got, "\n"))
	}
	got = got[1:]
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answer:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	paragraphs := strings.Join(rep.Conclude(), "\n")
	for _, line := range got {
		if n := utf8.RuneCountInString(line); n > textWidth {
			t.Errorf("a line of %d characters, over %d: %q", n, textWidth, line)
		}
		for _, g := range rep.Groups {
			if strings.Contains(line, g.Workload) || g.Params != "" && strings.Contains(line, g.Params) {
				t.Errorf("a line names the workload %s %s: %q", g.Workload, g.Params, line)
			}
		}
		// A range is Conclude's, or that of the untested medians it
		// gives one by one.
		for _, figure := range figureRE.FindAllString(line, -1) {
			figure = strings.TrimSuffix(strings.TrimSuffix(figure, " faster"), " slower")
			lo, hi, ok := strings.Cut(figure, "–")
			if !strings.Contains(paragraphs, figure) &&
				(!ok || !strings.Contains(paragraphs, lo+"×") || !strings.Contains(paragraphs, hi)) {
				t.Errorf("the figure %s is not Conclude's:\n%s\n%s", figure, line, paragraphs)
			}
		}
	}
}

// Every impl the verdict knows, as TestVerdictEveryImpl has them: a line
// per choice, each the range of its paragraph, in fewer than 10 lines.
func TestAnswerEveryImpl(t *testing.T) {
	rep := everyImplReport(t)
	checkAnswer(t, rep, []string{
		"  in one process:   pick inproc-clone-isolated (inproc's default): 10–25× faster than localhost",
		"  if rules hold:    inproc's other modes (see the inproc docs): 2.1–4.0× faster than the default",
		"  vs grpchan:       inproc-clone-isolated: 2.0–3.0× faster",
		"  vs grpchan-share: inproc-share-isolated, -share-inline: faster in 1 of 2 workloads (3.0×), slower",
		"                    in 1 (1.6×)",
		"  sockets vs TCP:   unix 1.6× faster than localhost;",
		"                    abstract 1.7× faster than localhost (no significant difference in 1 of 2)",
	})
	if n := len(rep.answer(textWidth)); n > 10 {
		t.Errorf("the answer for every impl takes %d lines, want at most 10", n)
	}
	// The floors are for maintainers: LeftToGain's, not the answer's.
	if got := strings.Join(rep.answer(textWidth), "\n"); strings.Contains(got, "floor") || strings.Contains(got, "direct") {
		t.Errorf("the answer speaks of the floors or yardsticks:\n%s", got)
	}
}

// A run filtered to a few impls: the answer speaks of those alone, and
// names only the modes run.
func TestAnswerFiltered(t *testing.T) {
	checkAnswer(t, reportOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "unix": 31250},
	}), []string{
		"  in one process: no inproc impl in this run",
		"  sockets vs TCP: unix 1.6× faster than localhost",
	})
	checkAnswer(t, reportOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000, "inproc-share-inline": 500},
	}), []string{
		"  in one process: pick inproc-clone-isolated (inproc's default): 25× faster than localhost",
		"  if rules hold:  inproc-share-inline (see the inproc docs): 4.0× faster than the default",
	})
	checkAnswer(t, reportOf(t, "grpchan", 5, map[string]map[string]float64{
		unaryBench: {"grpchan": 4000, "abstract": 30000},
	}), []string{
		"  in one process: no inproc impl in this run",
		"  sockets vs TCP: no localhost in this run to compare abstract with",
	})
	checkAnswer(t, reportOf(t, "localhost", 5, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "connect-inproc": 10000, "connect-unix": 40000},
		listBench:  {"xproc-unix": 100000, "xproc-shm": 40000},
	}), []string{
		"  in one process:    no inproc impl in this run",
		"  http.Handler:      connect-inproc: 4.0× faster than connect-unix",
		"  between processes: pick xproc-shm: 2.5× faster than xproc-unix",
	})
}

// Workloads without a significant difference are counted, never given a
// figure, and where none differs the answer says so.
func TestAnswerNoDifference(t *testing.T) {
	checkAnswer(t, reportOf(t, "localhost", 5, map[string]map[string]float64{
		"BenchmarkListStrings/impl=IMPL/respSize=1-2": {"localhost": 10000, "unix": 10050},
		listBench:  {"localhost": 10000, "unix": 6250},
		unaryBench: {"localhost": 50000, "unix": 31250},
	}), []string{
		"  in one process: no inproc impl in this run",
		"  sockets vs TCP: unix 1.6× faster than localhost (no significant difference in 1 of 3)",
	})
	checkAnswer(t, reportOf(t, "localhost", 5, map[string]map[string]float64{
		listBench:  {"localhost": 10000, "unix": 10050},
		unaryBench: {"localhost": 50000, "unix": 50100},
	}), []string{
		"  in one process: no inproc impl in this run",
		"  sockets vs TCP: unix no significant difference from localhost in 2 workloads",
	})
	// Faster in some, slower in others, the same in the rest.
	checkAnswer(t, reportOf(t, "localhost", 5, map[string]map[string]float64{
		"BenchmarkListStrings/impl=IMPL/respSize=1-2": {"localhost": 10000, "unix": 10050},
		listBench:  {"localhost": 10000, "unix": 20000},
		unaryBench: {"localhost": 50000, "unix": 25000},
	}), []string{
		"  in one process: no inproc impl in this run",
		"  sockets vs TCP: unix faster than localhost in 1 of 3 workloads (2.0×), slower in 1 (2.0×), no",
		"                  significant difference in 1",
	})
}

// With too few runs for a U test the answer cannot tell, and claims no
// difference nor its absence.
func TestAnswerTooFewRuns(t *testing.T) {
	rep := reportOf(t, "localhost", 3, map[string]map[string]float64{
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000, "unix": 31250},
	})
	checkAnswer(t, rep, []string{
		"  in one process: pick inproc-clone-isolated (inproc's default): cannot tell with 3 runs against",
		"                  localhost (4 or more needed; untested medians: 25× faster)",
		"  sockets vs TCP: unix cannot tell with 3 runs against localhost",
		"                  (4 or more needed; untested medians: 1.6× faster)",
	})
	if got := strings.Join(rep.answer(textWidth), "\n"); regexp.MustCompile(`[^:] \d[\d.–]*×|no significant difference`).MatchString(got) {
		t.Errorf("the answer claims what the runs could not test:\n%s", got)
	}

	impls := []string{"localhost", "unix"}
	text := results("BenchmarkBatching/impl=IMPL/batch=1-2", map[string]float64{"localhost": 30000, "unix": 29000}, impls, 5) +
		results("BenchmarkBatching/impl=IMPL/batch=64-2", map[string]float64{"localhost": 10000, "unix": 29000}, impls, 5) +
		results("BenchmarkBatching/impl=IMPL/batch=1", map[string]float64{"localhost": 30000}, impls[:1], 3) +
		results("BenchmarkBatching/impl=IMPL/batch=64", map[string]float64{"localhost": 10000}, impls[:1], 3)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, rep, []string{
		"  in one process: no inproc impl in this run",
		"  batching:       64 items a message instead of one: 3× as fast (package batch);",
		"                  no significant difference to unix;",
		"                  cannot tell for localhost with 3 runs (4 or more needed)",
		"  sockets vs TCP: unix faster than localhost in 1 of 2 workloads (1.03×), slower in 1 (2.9×)",
	})
}

// A run interrupted midway: the groups with runs enough keep their
// range, and the others are counted as untested.
func TestAnswerInterrupted(t *testing.T) {
	impls := []string{"localhost", "inproc-clone-isolated"}
	text := results(unaryBench, map[string]float64{"localhost": 50000, "inproc-clone-isolated": 2000}, impls, 5) +
		results(listBench, map[string]float64{"localhost": 10000, "inproc-clone-isolated": 1000}, impls, 2)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, rep, []string{
		"  in one process: pick inproc-clone-isolated (inproc's default): 25× faster than localhost, and",
		"                  cannot tell in 1 workload with 2 runs (4 or more needed; untested medians: 10×",
		"                  faster)",
	})
}

// The terminal prints the answer, not the paragraphs, and the floor gap
// only where the report has it.
func TestWriteTextAnswer(t *testing.T) {
	rep := reportOf(t, "localhost", 5, map[string]map[string]float64{
		listBench:  {"localhost": 10000, "inproc-clone-isolated": 1000, "floor": 400},
		unaryBench: {"localhost": 50000, "inproc-clone-isolated": 2000, "floor": 500},
	})
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "verdict") {
		t.Errorf("a report without a verdict shows one:\n%s", b.String())
	}
	rep.Verdict = rep.Conclude()
	b.Reset()
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// Last, where a terminal leaves it in view.
	want := "\n\n" + answerHeader + "\n  in one process: pick inproc-clone-isolated (inproc's default): 10–25× faster than localhost\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("text:\n%s\nwant it to end with:\n%s", b.String(), want)
	}
}
