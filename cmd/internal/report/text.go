package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report as aligned plain text, a table per group,
// for a terminal.
func (r *Report) WriteText(out io.Writer) error {
	w := &errWriter{w: out}
	fmt.Fprintf(w, "environment: %s\n%s\n", r.Environment.Summary(), r.legend())
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\n%s, %d runs\n", g.Title(), maxRuns(g))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		// AlignRight pads every cell on the left; the first column, of
		// names, is padded on the right by hand.
		width := len("impl")
		for _, row := range g.Rows {
			width = max(width, len(row.Impl))
		}
		line := func(cells []string) {
			cells[0] += strings.Repeat(" ", width-len(cells[0]))
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		line(r.tableHeader())
		for _, row := range g.Rows {
			line(tableRow(row))
		}
		tw.Flush() // its error is w's
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	return w.err
}

// maxRuns is the most runs any impl of g has; they differ only when a
// run was cut short.
func maxRuns(g Group) int {
	n := 0
	for _, row := range g.Rows {
		n = max(n, row.Runs)
	}
	return n
}
