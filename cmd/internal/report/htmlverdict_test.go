package report

import (
	"reflect"
	"strings"
	"testing"
)

// A verdict paragraph on the page: its figures bold, its asides muted,
// and the workloads' figures from "in this run (...)" a list of their
// own, each with its workload's name in full.
func TestVerdictItem(t *testing.T) {
	impls := []string{"localhost", "inproc-clone-isolated"}
	text := results("BenchmarkListStrings/impl=IMPL/respSize=1-2", map[string]float64{"localhost": 10000, "inproc-clone-isolated": 1300}, impls, 5) +
		results("BenchmarkListStrings/impl=IMPL/respSize=10-2", map[string]float64{"localhost": 11000, "inproc-clone-isolated": 1000}, impls, 5) +
		results("BenchmarkUnary/impl=IMPL-2", map[string]float64{"localhost": 46000, "inproc-clone-isolated": 1000}, impls, 5)
	for _, bench := range []string{"BenchmarkSeries/impl=IMPL/series=1000-2", "BenchmarkPingPong/impl=IMPL-2", "BenchmarkBatching/impl=IMPL/batch=64-2"} {
		text += results(bench, map[string]float64{"localhost": 10000, "inproc-clone-isolated": 10050}, impls, 5)
	}
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	want := verdictItem{Clauses: []verdictClause{{
		Spans: []verdictSpan{
			{Text: "For calls within one process, pick inproc-clone-isolated, inproc's default "},
			{Text: "(Clone copies every message, Isolated runs each handler on its own goroutine: safe for any handler)", Aside: true},
			{Text: ": it is "},
			{Text: "7.7–46× faster", Figure: true},
			{Text: " than localhost "},
			{Text: "(grpc-go over TCP)", Aside: true},
			{Text: " in this run"},
		},
		Figures: []workloadFigure{
			{"ListStrings respSize=1", "7.7×"}, {"ListStrings respSize=10", "11×"}, {"Unary", "46×"},
			{"Series series=1000", ""}, {"PingPong", ""}, {"Batching batch=64", ""},
		},
	}}, end: "."}
	if got := verdictItems(rep.choices())[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("worded\n%+v\nwant\n%+v", got, want)
	}

	// Two clauses, each with its figures.
	every := everyImplReport(t)
	cs := every.choices()
	two := cs[len(cs)-1].item()
	if len(two.Clauses) != 2 || len(two.Clauses[0].Figures) != 2 || len(two.Clauses[1].Figures) != 2 ||
		!strings.HasPrefix(two.Clauses[1].Spans[0].Text, "abstract") ||
		two.Clauses[1].Figures[0] != (workloadFigure{"Unary", "1.7×"}) || two.Clauses[1].Figures[1] != (workloadFigure{"ListStrings respSize=10", ""}) {
		t.Errorf("two clauses worded as %+v", two)
	}

	// Whatever the paragraph, its words are all on the page, and what
	// the page shows in bold is a figure.
	batching := results("BenchmarkBatching/impl=IMPL/batch=1-2", map[string]float64{"localhost": 30000, "unix": 29000}, []string{"localhost", "unix"}, 3) +
		results("BenchmarkBatching/impl=IMPL/batch=64-2", map[string]float64{"localhost": 10000, "unix": 29000}, []string{"localhost", "unix"}, 3)
	few, err := Build(testEnv, parse(t, batching+results(unaryBench, map[string]float64{"localhost": 50000, "inproc-clone-isolated": 2000}, impls, 2)), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	none := reportOf(t, "grpchan", 5, map[string]map[string]float64{unaryBench: {"grpchan": 4000, "abstract": 30000}})
	for _, r := range []*Report{rep, every, few, none} {
		for _, c := range append(r.choices(), r.floorChoices()...) {
			p, item := c.paragraph(), c.item()
			var b strings.Builder
			for _, c := range item.Clauses {
				for _, s := range c.Spans {
					b.WriteString(s.Text)
					if s.Figure && !figureRE.MatchString(s.Text) {
						t.Errorf("%q shows %q as a figure", p, s.Text)
					}
				}
				for _, f := range c.Figures {
					b.WriteString(" " + f.Label + " " + f.Value)
				}
				b.WriteString(" ")
			}
			// "no significant difference in" becomes the figures' "~".
			shown := words(b.String() + " no significant difference in")
			for w := range words(p) {
				if !shown[w] {
					t.Errorf("%q shows as %q, without %q", p, b.String(), w)
				}
			}
		}
	}
}

// words is the set of words of s, without punctuation.
func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(strings.NewReplacer("(", " ", ")", " ", ":", " ", ",", " ", ";", " ", ".", " ").Replace(s)) {
		m[w] = true
	}
	return m
}

// The overview warns against reading the xproc rows against a baseline
// whose server shares the client's process, where the run has them.
func TestHTMLCrossProcessNote(t *testing.T) {
	for _, tc := range []struct {
		impls map[string]float64
		note  bool
	}{
		{map[string]float64{"localhost": 50000, "inproc-clone-isolated": 2000}, false},
		{map[string]float64{"localhost": 50000, "inproc-clone-isolated": 2000, "xproc-unix": 90000, "xproc-shm": 40000}, true},
	} {
		rep := reportOf(t, "localhost", 5, map[string]map[string]float64{unaryBench: tc.impls})
		var b strings.Builder
		if err := rep.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "The xproc-* rows have their server in a process of its own"); got != tc.note {
			t.Errorf("impls %v: the overview's note shown %v, want %v", tc.impls, got, tc.note)
		}
	}
}
