package report

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The terminal shows the verdict as an answer: a line per choice, what
// to pick and by how much over the workloads run, and no workload's own
// figure, which the tables, the markdown and the page hold. Each line is
// worded from the same choice as Conclude's paragraph, never read back
// from the paragraph's sentences.

// answerHeader opens the answer, and says where the rest is.
const answerHeader = "verdict (ranges over the workloads run; each workload's figure: --format markdown, -o FILE.html):"

// An answerLine is a choice in a line: the situation it is about, and
// what to pick and by how much, in parts that may each take a line of
// their own where together they do not fit.
type answerLine struct {
	label string
	parts []string
}

// answer is r's verdict as the terminal shows it, a line per choice of
// Conclude's, wrapped to width columns: the labels in a column of their
// own, each part that does not fit on its label's line on a line of its
// own under the text.
func (r *Report) answer(width int) []string {
	var lines []answerLine
	labelWidth := 0
	for _, c := range r.choices() {
		l := c.line()
		lines = append(lines, l)
		labelWidth = max(labelWidth, utf8.RuneCountInString(l.label))
	}
	indent := strings.Repeat(" ", 2+labelWidth+2)
	out := []string{answerHeader}
	for _, l := range lines {
		first := "  " + l.label + ":" + strings.Repeat(" ", labelWidth-utf8.RuneCountInString(l.label)+1)
		text := []string{strings.Join(l.parts, "; ")}
		if utf8.RuneCountInString(indent+text[0]) > width {
			text = l.parts
		}
		var wrapped []string
		for i, t := range text {
			if i < len(text)-1 {
				t += ";"
			}
			wrapped = append(wrapped, wrapAside(t, width-len(indent))...)
		}
		for i, t := range wrapped {
			if i == 0 {
				out = append(out, first+t)
			} else {
				out = append(out, indent+t)
			}
		}
	}
	return out
}

// wrapAside wraps s to width. Where s does not fit but would without
// the aside it ends in, the aside takes a line of its own, whole.
func wrapAside(s string, width int) []string {
	i := strings.LastIndex(s, " (")
	if i < 0 || !strings.HasSuffix(strings.TrimRight(s, ";"), ")") ||
		utf8.RuneCountInString(s) <= width || utf8.RuneCountInString(s[:i]) > width || utf8.RuneCountInString(s[i+1:]) > width {
		return wrap(s, width)
	}
	return []string{s[:i], s[i+1:]}
}

// line is c worded for the terminal: its situation and, without the
// workloads' figures, what it picks and by how much.
func (c choice) line() answerLine {
	var cmp comparison
	if len(c.comparisons) > 0 {
		cmp = c.comparisons[0]
	}
	switch c.situation {
	case pickInProcess:
		return answerLine{"in one process", []string{"pick " + cmp.cands[0] + " (inproc's default): " + cmp.brief(cmp.ref)}}
	case modesInProcess:
		modes := abbreviate(cmp.cands)
		if len(cmp.cands) == len(implsOf(kindMode)) {
			modes = "inproc's other modes"
		}
		return answerLine{"if rules hold", []string{modes + " (see the inproc docs): " + cmp.brief("the default")}}
	case modesOnlyInProcess:
		return answerLine{"in one process", []string{"no " + defaultImpl() + " (inproc's default) in this run",
			"if their rules hold, " + abbreviate(cmp.cands) + ": " + cmp.brief(cmp.ref)}}
	case noInProcess:
		return answerLine{"in one process", []string{"no inproc impl in this run"}}
	case versusRival:
		return answerLine{"vs " + cmp.ref, []string{abbreviate(cmp.cands) + ": " + cmp.brief("")}}
	case forHandlers:
		return answerLine{"http.Handler", []string{cmp.cands[0] + ": " + cmp.brief(cmp.ref)}}
	case batchItems:
		return answerLine{"batching", batchBrief(c.batches)}
	case pickBetweenProcesses:
		return answerLine{"between processes", []string{"pick " + cmp.cands[0] + ": " + cmp.brief(cmp.ref)}}
	case socketsWithoutTCP:
		return answerLine{"sockets vs TCP", []string{"no localhost in this run to compare " + strings.Join(c.impls, " and ") + " with"}}
	case socketsVersusTCP:
		parts := make([]string, len(c.comparisons))
		for i, s := range c.comparisons {
			parts[i] = s.cands[0] + " " + s.brief(s.ref)
		}
		return answerLine{"sockets vs TCP", parts}
	}
	panic(fmt.Sprintf("no answer line for a choice of situation %d", c.situation))
}

// brief is how the fastest of c's candidates compares with the
// reference, called refName ("" to leave it unnamed), without each
// workload's figure: "2.0–32× faster than localhost (no significant
// difference in 1 of 11 workloads)". The range is the one predicate
// gives.
func (c comparison) brief(refName string) string {
	than, from, against := "", "", ""
	if refName != "" {
		than, from, against = " than "+refName, " from "+refName, " against "+refName
	}
	if c.ref == "" {
		return "cannot be compared: no baseline outside inproc in this run"
	}
	if len(c.findings) == 0 {
		return "cannot be compared: no " + c.ref + " in the same workloads"
	}
	significant, noDiff, untested := c.split()
	tested := len(significant) + len(noDiff)
	if tested == 0 {
		return "cannot tell with " + c.untestedRuns(untested, against)
	}
	var s string
	faster, slower := speedups(significant)
	switch {
	case len(significant) == 0:
		s = fmt.Sprintf("no significant difference%s in %s", from, workloads(tested))
	case len(slower) == 0:
		s = span(faster) + " faster" + than
	case len(faster) == 0:
		s = span(slower) + " slower" + than
	default:
		s = fmt.Sprintf("faster%s in %d of %s (%s), slower in %d (%s)", than, len(faster), workloads(tested), span(faster), len(slower), span(slower))
		if len(noDiff) > 0 {
			s += fmt.Sprintf(", no significant difference in %d", len(noDiff))
		}
	}
	if len(significant) > 0 && (len(faster) == 0 || len(slower) == 0) && len(noDiff) > 0 {
		s += fmt.Sprintf(" (no significant difference in %d of %d)", len(noDiff), tested)
	}
	if len(untested) > 0 {
		s += fmt.Sprintf(", and cannot tell in %s with %s", workloads(len(untested)), c.untestedRuns(untested, ""))
	}
	return s
}

// untestedRuns says how many runs the findings fs had, then against (if
// not ""), how many a U test needs, and the range of their medians'
// ratios, marked untested: "3 runs against localhost (4 or more needed;
// untested medians: 25× faster)".
func (c comparison) untestedRuns(fs []finding, against string) string {
	lo, hi := fs[0].runs, fs[0].runs
	for _, f := range fs {
		lo, hi = min(lo, f.runs), max(hi, f.runs)
	}
	var medians []string
	faster, slower := speedups(fs)
	if len(faster) > 0 {
		medians = append(medians, span(faster)+" faster")
	}
	if len(slower) > 0 {
		medians = append(medians, span(slower)+" slower")
	}
	return fmt.Sprintf("%s%s (%d or more needed; untested medians: %s)", runsText(lo, hi), against, UTestRuns(), strings.Join(medians, " and "))
}

// implsOf are the impls of kind k in the table, whether run or not.
func implsOf(k implKind) []string {
	var names []string
	for _, ik := range implKinds {
		if ik.kind == k {
			names = append(names, ik.name)
		}
	}
	return names
}

// workloads is "1 workload" or "n workloads".
func workloads(n int) string {
	if n == 1 {
		return "1 workload"
	}
	return fmt.Sprintf("%d workloads", n)
}

// abbreviate lists impls, each after the first without the prefix it
// shares with the first: "inproc-share-isolated, -clone-inline,
// -share-inline".
func abbreviate(impls []string) string {
	out := slices.Clone(impls)
	if prefix, _, ok := strings.Cut(impls[0], "-"); ok {
		for i := 1; i < len(out); i++ {
			if rest, ok := strings.CutPrefix(out[i], prefix); ok && strings.HasPrefix(rest, "-") {
				out[i] = rest
			}
		}
	}
	return strings.Join(out, ", ")
}

// batchBrief is the batching pairs ps in a line: the range of the
// figures of every impl and pair, the impls batching made no significant
// difference to, and those too few runs tested.
func batchBrief(ps []batchPair) []string {
	var items, same, untested []string
	var figures []float64
	lo, hi := 0, 0
	for _, p := range ps {
		if !slices.Contains(items, p.items) {
			items = append(items, p.items)
		}
		for _, f := range p.figures {
			figures = append(figures, f.ratio)
		}
		for _, impl := range p.same {
			if !slices.Contains(same, impl) {
				same = append(same, impl)
			}
		}
		for _, f := range p.untested {
			if !slices.Contains(untested, f.impl) {
				untested = append(untested, f.impl)
			}
		}
		if len(p.untested) > 0 {
			if lo == 0 {
				lo, hi = p.lo, p.hi
			}
			lo, hi = min(lo, p.lo), max(hi, p.hi)
		}
	}
	var parts []string
	if len(figures) > 0 {
		// Conclude gives each figure to two digits: so does its range.
		l, h := fmt.Sprintf("%.2g", slices.Min(figures)), fmt.Sprintf("%.2g×", slices.Max(figures))
		if l+"×" == h {
			parts = append(parts, h+" as fast (package batch)")
		} else {
			parts = append(parts, l+"–"+h+" as fast (package batch)")
		}
	}
	if len(same) > 0 {
		parts = append(parts, "no significant difference to "+strings.Join(same, ", "))
	}
	if len(untested) > 0 {
		parts = append(parts, fmt.Sprintf("cannot tell for %s with %s (%d or more needed)", strings.Join(untested, ", "), runsText(lo, hi), UTestRuns()))
	}
	parts[0] = strings.Join(items, " or ") + " items a message instead of one: " + parts[0]
	return parts
}
