package report

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as GitHub-flavoured markdown: the
// verdict, the settings and the environment, then a section with a table
// per group.
func (r *Report) WriteMarkdown(out io.Writer) error {
	w := &errWriter{w: out}
	if len(r.Verdict) > 0 {
		fmt.Fprintln(w, "**Verdict**")
		fmt.Fprintln(w)
		for _, v := range r.Verdict {
			fmt.Fprintf(w, "- %s\n", EscapeMarkdown(v))
		}
		fmt.Fprintln(w)
	}
	if len(r.FloorGap) > 0 {
		fmt.Fprintln(w, "**Left to gain against the floors**")
		fmt.Fprintln(w)
		for _, v := range r.FloorGap {
			fmt.Fprintf(w, "- %s\n", EscapeMarkdown(v))
		}
		fmt.Fprintln(w)
	}
	if s := r.settingsLine(); s != "" {
		fmt.Fprintf(w, "Settings: %s.\n\n", EscapeMarkdown(s))
	}
	fmt.Fprintf(w, "Environment: %s.\n\n", EscapeMarkdown(r.Environment.Summary()))
	if n := r.NoiseLine(); n != "" {
		fmt.Fprintf(w, "%s\n\n", EscapeMarkdown(n))
	}
	fmt.Fprintln(w, EscapeMarkdown(r.legend()))
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\n### %s, %s\n\n", EscapeMarkdown(g.Title()), runsTitle(g))
		row := func(cells []string) {
			for i := range cells {
				cells[i] = EscapeMarkdown(cells[i])
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		row(r.tableHeader())
		align := make([]string, len(r.numericColumns()))
		for i, numeric := range r.numericColumns() {
			align[i] = "---"
			if numeric {
				align[i] = "--:"
			}
		}
		fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
		for _, gr := range g.Rows {
			row(r.tableRow(gr))
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "- %s\n", EscapeMarkdown(n))
		}
	}
	return w.err
}

// markdownSpecial are the characters that would break a table cell or
// start markup.
var markdownSpecial = strings.NewReplacer(`|`, `\|`, `*`, `\*`, `_`, `\_`, "`", "\\`", `<`, `&lt;`)

// EscapeMarkdown escapes s for a markdown table cell or paragraph.
func EscapeMarkdown(s string) string { return markdownSpecial.Replace(s) }
