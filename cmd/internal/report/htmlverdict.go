package report

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The HTML page shows the verdict as a list of findings, each a short
// sentence with its figure in bold and, under it, the figure of each
// workload it comes from. It reads them from the verdict's sentences,
// which say "... in this run (Workload params: 5.8×, ...; no significant
// difference in ...)": the parenthesis after "in this run" holds the
// workloads' figures and any other parenthesis is an aside, shown muted.
// A paragraph of another shape is shown as it is.

// A verdictItem is a verdict paragraph as the page shows it: its clauses,
// each with the figures of its workloads.
type verdictItem struct {
	Clauses []verdictClause
}

// A verdictClause is a sentence, or a part of one that has its own
// figures ("unix is 1.2× faster ...; abstract ...").
type verdictClause struct {
	Spans   []verdictSpan
	Figures []workloadFigure
}

// A verdictSpan is a piece of a clause's text: plain, an aside (a
// parenthesis) or a figure ("5.8–36× faster").
type verdictSpan struct {
	Text          string
	Aside, Figure bool
}

// A workloadFigure is one workload's figure: "ListStrings respSize=10",
// "7.6×"; Value is empty where the difference is not significant.
type workloadFigure struct {
	Label, Value string
}

// inThisRun ends a clause whose figures the parenthesis after it holds.
const inThisRun = " in this run "

// figureRE finds the figures of a sentence: "1.8–46× faster", "2.3×
// slower", "1.5×".
var figureRE = regexp.MustCompile(`\d[\d.]*(?:–\d[\d.]*)?×(?: (?:faster|slower))?`)

// parseVerdictItem splits a verdict paragraph into clauses, their asides and
// their workloads' figures.
// workloadOf, if not nil, names the only workload that has the given
// params ("respSize=10"), or returns "".
func parseVerdictItem(p string, workloadOf func(params string) string) verdictItem {
	var f verdictItem
	var cur verdictClause
	text := func(s string, aside bool) {
		if aside {
			cur.Spans = append(cur.Spans, verdictSpan{Text: s, Aside: true})
			return
		}
		for s != "" {
			loc := figureRE.FindStringIndex(s)
			if loc == nil {
				cur.Spans = append(cur.Spans, verdictSpan{Text: s})
				return
			}
			if loc[0] > 0 {
				cur.Spans = append(cur.Spans, verdictSpan{Text: s[:loc[0]]})
			}
			cur.Spans = append(cur.Spans, verdictSpan{Text: s[loc[0]:loc[1]], Figure: true})
			s = s[loc[1]:]
		}
	}
	// plain: where the text after the last parenthesis starts; clause:
	// where the current clause starts, whose "no significant difference"
	// may come before an aside.
	depth, start, plain, clause := 0, 0, 0, 0
	for i, c := range p {
		switch c {
		case '(':
			if depth == 0 {
				start = i
			}
			depth++
		case ')':
			if depth == 0 {
				return verdictItem{Clauses: []verdictClause{{Spans: []verdictSpan{{Text: p}}}}} // unbalanced: as it is
			}
			depth--
			if depth > 0 {
				continue
			}
			before, inner := p[plain:start], p[start+1:i]
			noDiff := strings.Contains(p[clause:start], "no significant difference")
			if figures, ok := parseFigures(inner, noDiff, workloadOf); ok && strings.HasSuffix(before, inThisRun) {
				text(strings.TrimSuffix(before, " "), false)
				cur.Figures = figures
				f.Clauses = append(f.Clauses, cur)
				cur = verdictClause{}
				clause = i + 1
			} else {
				text(before, false)
				text(p[start:i+1], true)
			}
			plain = i + 1
		}
	}
	if depth != 0 {
		return verdictItem{Clauses: []verdictClause{{Spans: []verdictSpan{{Text: p}}}}}
	}
	// What follows the last figures: "." ends the sentence; "; abstract
	// ..." starts a clause of its own.
	rest := strings.TrimLeft(p[plain:], "; ")
	if len(f.Clauses) > 0 && strings.Trim(rest, ".") == "" {
		rest = ""
	}
	if rest != "" {
		text(rest, false)
	}
	if len(cur.Spans) > 0 {
		f.Clauses = append(f.Clauses, cur)
	}
	// A clause after the first starts after "; ": it gets its own line.
	for i := 1; i < len(f.Clauses); i++ {
		if sp := f.Clauses[i].Spans; len(sp) > 0 {
			sp[0].Text = strings.TrimLeft(sp[0].Text, "; ")
		}
	}
	return f
}

// parseFigures reads the figures of the workloads from the parenthesis
// after "in this run": "ListStrings respSize=1: 5.8×, respSize=10: 7.6×;
// no significant difference in Unary". It says false if s is not such a
// list. Where noDiff, the clause said there is no significant difference,
// and the list may be workloads alone: "ListStrings respSize=1, Unary".
func parseFigures(s string, noDiff bool, workloadOf func(string) string) ([]workloadFigure, bool) {
	var figures []workloadFigure
	workload := ""
	if workloadOf == nil {
		workloadOf = func(string) string { return "" }
	}
	add := func(label, value string) bool {
		label = strings.TrimSpace(label)
		if label == "" {
			return false
		}
		// The verdict names a workload once for its groups in a row:
		// "ListStrings respSize=1, respSize=10" is of ListStrings both.
		// Which workload has the params says it best, as the list's
		// order here may not be the one the verdict shortened in.
		if first, _, _ := strings.Cut(label, " "); strings.Contains(first, "=") {
			if w := workloadOf(label); w != "" {
				label = w + " " + label
			} else if workload != "" {
				label = workload + " " + label
			}
		} else {
			workload = first
		}
		if r := []rune(label)[0]; !unicode.IsUpper(r) {
			return false
		}
		figures = append(figures, workloadFigure{label, strings.TrimSpace(value)})
		return true
	}
	for i, part := range strings.Split(s, "; ") {
		if rest, ok := strings.CutPrefix(part, "no significant difference in "); ok {
			for _, l := range strings.Split(rest, ", ") {
				if !add(l, "") {
					return nil, false
				}
			}
			continue
		}
		// Only the first part has figures; a figure has a colon.
		if i > 0 {
			return nil, false
		}
		if !strings.Contains(part, ": ") {
			if !noDiff {
				return nil, false
			}
			for _, l := range strings.Split(part, ", ") {
				if !add(l, "") {
					return nil, false
				}
			}
			continue
		}
		for _, item := range strings.Split(part, ", ") {
			label, value, ok := strings.Cut(item, ": ")
			if !ok || !add(label, value) {
				return nil, false
			}
		}
	}
	return figures, len(figures) > 0
}

// verdictItems are paragraphs of the report's verdict, or of its floor
// gap, as the page shows them.
func (r *Report) verdictItems(paragraphs []string) []verdictItem {
	// The workloads that have each set of params, as the verdict writes
	// them: "respSize=10 GOMAXPROCS 2" where GOMAXPROCS differ.
	byParams := make(map[string][]string)
	for _, g := range r.Groups {
		for _, ps := range []string{strings.ReplaceAll(g.Params, "/", " "), strings.TrimSpace(strings.ReplaceAll(g.Params, "/", " ") + " GOMAXPROCS " + strconv.Itoa(g.GOMAXPROCS))} {
			if !slices.Contains(byParams[ps], g.Workload) {
				byParams[ps] = append(byParams[ps], g.Workload)
			}
		}
	}
	workloadOf := func(params string) string {
		if ws := byParams[params]; len(ws) == 1 {
			return ws[0]
		}
		return ""
	}
	fs := make([]verdictItem, len(paragraphs))
	for i, v := range paragraphs {
		fs[i] = parseVerdictItem(v, workloadOf)
	}
	return fs
}

// Brief is the verdict paragraph p without the figure of each workload,
// for a terminal: "unix is 1.6× faster than localhost in this run." The
// range it keeps spans those figures. Where some workloads showed no
// significant difference, it says in how many. A paragraph of another
// shape is returned as it is.
func Brief(p string) string {
	item := parseVerdictItem(p, nil)
	var clauses []string
	for _, c := range item.Clauses {
		var b strings.Builder
		for _, sp := range c.Spans {
			b.WriteString(sp.Text)
		}
		text := strings.TrimRight(b.String(), ". ")
		same := 0
		for _, f := range c.Figures {
			if f.Value == "" {
				same++
			}
		}
		if same > 0 && same < len(c.Figures) {
			text += fmt.Sprintf(" (no significant difference in %d of %d workloads)", same, len(c.Figures))
		}
		clauses = append(clauses, text)
	}
	return strings.Join(clauses, "; ") + "."
}
