package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// textWidth is the width the verdict's paragraphs are wrapped to in text,
// a terminal's.
const textWidth = 100

// WriteText writes the report as aligned plain text for a terminal: the
// settings, a table per group, which hold the workloads' figures, and
// last, where the terminal leaves it in view, the floor gap if the report
// has one, each choice without its workloads' figures, and the verdict if
// it has one, a line per choice with the range of each and no workload's
// figure. Both are written from the choices of LeftToGain and Conclude.
func (r *Report) WriteText(out io.Writer) error {
	w := &errWriter{w: out}
	list := func(title string, cs []choice) {
		fmt.Fprintln(w, title)
		for _, c := range cs {
			for i, line := range wrap(c.item().brief(), textWidth-4) {
				prefix := "    "
				if i == 0 {
					prefix = "  - "
				}
				fmt.Fprintln(w, prefix+line)
			}
		}
	}
	if s := r.settingsLine(); s != "" {
		fmt.Fprintf(w, "settings: %s\n", s)
	}
	fmt.Fprintf(w, "environment: %s\n", r.Environment.Summary())
	for _, line := range []string{r.NoiseLine(), r.legend()} {
		for _, l := range wrap(line, textWidth) {
			fmt.Fprintln(w, l)
		}
	}
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\n%s, %s\n", g.Title(), runsTitle(g))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		// AlignRight pads every cell on the left; the first column, of
		// names, is padded on the right by hand.
		width := len("impl")
		for _, row := range g.Rows {
			width = max(width, len(row.Impl))
		}
		// With the noisy marker in a group, the other ± cells are padded
		// as wide, so that the percentages stay aligned.
		noisy := slices.ContainsFunc(g.Rows, func(r Row) bool { return r.Noisy })
		line := func(cells []string) {
			cells[0] += strings.Repeat(" ", width-len(cells[0]))
			if noisy && !strings.HasSuffix(cells[2], noisyMarker) {
				cells[2] += strings.Repeat(" ", len(" "+noisyMarker))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		line(r.tableHeader())
		for _, row := range g.Rows {
			line(r.tableRow(row))
		}
		tw.Flush() // its error is w's
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	// The answer comes last, where a terminal leaves it in view once
	// the tables have scrolled by.
	if len(r.FloorGap) > 0 || len(r.Verdict) > 0 {
		fmt.Fprintln(w)
	}
	if len(r.FloorGap) > 0 {
		list("left to gain against the floors:", r.floorChoices())
	}
	if len(r.Verdict) > 0 {
		for _, line := range r.answer(textWidth) {
			fmt.Fprintln(w, line)
		}
	}
	return w.err
}

// wrap splits s into lines of at most width characters, at spaces; a
// word longer than width has a line of its own.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
