package report

import (
	"fmt"
	"strings"
)

// A choice is worded once, as a verdictItem: spans of text that say
// which part is a figure and which an aside, and the figure of each
// workload. Conclude's paragraph, the page's finding and the terminal's
// floor gap are all written from it, so that rewording a sentence cannot
// change what the page takes for a figure.

// A verdictItem is a choice worded: its clauses, each with the figures
// of its workloads.
type verdictItem struct {
	Clauses []verdictClause
	// end closes the paragraph: ".". The page leaves it out after a
	// list of figures.
	end string
}

// A verdictClause is a sentence, or a part of one that has its own
// figures ("unix is 1.2× faster ...; abstract ...").
type verdictClause struct {
	// sep joins the clause to the one before it in the paragraph: "; ".
	// The page starts the clause on a line of its own instead.
	sep     string
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
// "7.6×". Value is empty where the difference is not significant.
type workloadFigure struct {
	Label, Value string
}

// text is the item as Conclude's paragraph. Each clause's figures follow
// it in a parenthesis: "in this run (ListStrings respSize=1: 5.8×,
// respSize=10: 7.6×; no significant difference in Unary)".
func (it verdictItem) text() string {
	var b strings.Builder
	for _, c := range it.Clauses {
		b.WriteString(c.sep)
		for _, s := range c.Spans {
			b.WriteString(s.Text)
		}
		if len(c.Figures) > 0 {
			b.WriteString(" (" + figuresText(c.Figures) + ")")
		}
	}
	b.WriteString(it.end)
	return b.String()
}

// figuresText is the figures fs as a paragraph lists them. The
// significant come first, then those without a difference. Each list is
// shortened on its own: a label may drop the workload only where the
// list it is read in named it just before.
func figuresText(fs []workloadFigure) string {
	var labels, values, same []string
	for _, f := range fs {
		if f.Value == "" {
			same = append(same, f.Label)
		} else {
			labels, values = append(labels, f.Label), append(values, f.Value)
		}
	}
	same = shorten(same)
	if len(labels) == 0 {
		return strings.Join(same, ", ")
	}
	labels = shorten(labels)
	for i := range labels {
		labels[i] += ": " + values[i]
	}
	s := strings.Join(labels, ", ")
	if len(same) > 0 {
		s += "; no significant difference in " + strings.Join(same, ", ")
	}
	return s
}

// brief is the item without the figure of each workload, for a
// terminal: "unix is 1.6× faster than localhost in this run." Where some
// workloads of a clause showed no significant difference, it says in
// how many.
func (it verdictItem) brief() string {
	var b strings.Builder
	for _, c := range it.Clauses {
		b.WriteString(c.sep)
		var clause strings.Builder
		for _, s := range c.Spans {
			clause.WriteString(s.Text)
		}
		b.WriteString(strings.TrimRight(clause.String(), ". "))
		same := 0
		for _, f := range c.Figures {
			if f.Value == "" {
				same++
			}
		}
		if same > 0 && same < len(c.Figures) {
			fmt.Fprintf(&b, " (no significant difference in %d of %d workloads)", same, len(c.Figures))
		}
	}
	return b.String() + "."
}

// A wording builds a verdictItem span by span.
type wording struct {
	item verdictItem
	cur  verdictClause
}

// plain adds s as plain text.
func (w *wording) plain(s string) {
	if n := len(w.cur.Spans); n > 0 && !w.cur.Spans[n-1].Aside && !w.cur.Spans[n-1].Figure {
		w.cur.Spans[n-1].Text += s
		return
	}
	w.cur.Spans = append(w.cur.Spans, verdictSpan{Text: s})
}

// aside adds s in a parenthesis, which the page shows muted.
func (w *wording) aside(s string) {
	w.cur.Spans = append(w.cur.Spans, verdictSpan{Text: "(" + s + ")", Aside: true})
}

// figure adds the figure s, which the page shows in bold.
func (w *wording) figure(s string) {
	w.cur.Spans = append(w.cur.Spans, verdictSpan{Text: s, Figure: true})
}

// describe adds the impl's name, and what it is, when the table says, in
// an aside: "localhost (grpc-go over TCP)".
func (w *wording) describe(name string) {
	w.plain(name)
	if about := infoOf(name).about; about != "" {
		w.plain(" ")
		w.aside(about)
	}
}

// figures ends the clause with the figures of its workloads.
func (w *wording) figures(fs []workloadFigure) {
	w.cur.Figures = fs
	w.item.Clauses = append(w.item.Clauses, w.cur)
	w.cur = verdictClause{}
}

// sep adds s between two clauses: "; ". It starts a clause of its own
// only after one that ended with its figures.
func (w *wording) sep(s string) {
	if len(w.cur.Spans) == 0 && len(w.item.Clauses) > 0 {
		w.cur.sep = s
		return
	}
	w.plain(s)
}

// done ends the item with end: ".".
func (w *wording) done(end string) verdictItem {
	if len(w.item.Clauses) == 0 {
		w.plain(end)
	} else {
		w.item.end = end
	}
	if len(w.cur.Spans) > 0 {
		w.item.Clauses = append(w.item.Clauses, w.cur)
	}
	it := w.item
	*w = wording{}
	return it
}

// verdictItems are cs as the page shows them.
func verdictItems(cs []choice) []verdictItem {
	items := make([]verdictItem, len(cs))
	for i, c := range cs {
		items[i] = c.item()
	}
	return items
}
