package report

import (
	"reflect"
	"strings"
	"testing"
)

// A verdict paragraph on the page: its figures bold, its asides muted,
// and the workloads' figures from "in this run (...)" a list of their
// own, each with its workload's name in full.
func TestParseVerdictItem(t *testing.T) {
	p := "For calls within one process, pick inproc-clone-isolated, inproc's default (Clone copies every message): " +
		"it is 1.8–46× faster than localhost (grpc-go over TCP) in this run (ListStrings respSize=1: 7.7×, respSize=10: 11×, " +
		"Unary: 46×; no significant difference in Series series=1000, PingPong, batch=64)."
	// batch=64 follows PingPong here, but is Batching's.
	got := parseVerdictItem(p, func(params string) string {
		if params == "batch=64" {
			return "Batching"
		}
		return ""
	})
	want := verdictItem{Clauses: []verdictClause{{
		Spans: []verdictSpan{
			{Text: "For calls within one process, pick inproc-clone-isolated, inproc's default "},
			{Text: "(Clone copies every message)", Aside: true},
			{Text: ": it is "},
			{Text: "1.8–46× faster", Figure: true},
			{Text: " than localhost "},
			{Text: "(grpc-go over TCP)", Aside: true},
			{Text: " in this run"},
		},
		Figures: []workloadFigure{
			{"ListStrings respSize=1", "7.7×"}, {"ListStrings respSize=10", "11×"}, {"Unary", "46×"},
			{"Series series=1000", ""}, {"PingPong", ""}, {"Batching batch=64", ""},
		},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", got, want)
	}

	// Two clauses, each with its figures.
	two := parseVerdictItem("Across processes, unix is 1.2× faster than localhost in this run (Unary: 1.2×); "+
		"abstract shows no significant difference from localhost in this run (Unary).", nil)
	if len(two.Clauses) != 2 || len(two.Clauses[0].Figures) != 1 || len(two.Clauses[1].Figures) != 1 ||
		!strings.HasPrefix(two.Clauses[1].Spans[0].Text, "abstract") || two.Clauses[1].Figures[0] != (workloadFigure{"Unary", ""}) {
		t.Errorf("two clauses parsed as %+v", two)
	}

	// Whatever the paragraph, its words are all on the page, in order.
	for _, p := range []string{
		p,
		"This run has no inproc impl, so it says nothing of calls within one process.",
		"Batching: sending 64 items a message instead of one (Batching) makes localhost 5.3× as fast in this run (package batch does it for any stream).",
		"It was not tested: the verdict cannot tell with 2 runs; 4 or more are needed (untested medians in this run: Unary 3.0× faster).",
		"unbalanced (parenthesis in this run (Unary: 2×",
		"closing ) first in this run (Unary: 2×).",
	} {
		var b strings.Builder
		for _, c := range parseVerdictItem(p, nil).Clauses {
			for _, s := range c.Spans {
				b.WriteString(s.Text)
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
