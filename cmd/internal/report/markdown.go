package report

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as a GitHub-flavoured markdown page:
// a title and how the report was made (Made), the verdict, the floor gap,
// the Method, then the results: the settings, the environment, the share
// of noisy rows, the legend and a section with a table per group, and
// the notes last.
func (r *Report) WriteMarkdown(out io.Writer) error {
	w := &errWriter{w: out}
	fmt.Fprintln(w, "# localgrpc bench")
	if r.Made != "" {
		fmt.Fprintf(w, "\n%s\n", EscapeMarkdown(r.Made))
	}
	list := func(title string, paragraphs []string) {
		if len(paragraphs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n## %s\n\n", title)
		for _, v := range paragraphs {
			fmt.Fprintf(w, "- %s\n", EscapeMarkdown(v))
		}
	}
	list("Verdict", r.Verdict)
	list("Left to gain against the floors", r.FloorGap)
	fmt.Fprintf(w, "\n%s\n\n%s\n", methodHeading, Method())
	fmt.Fprintf(w, "\n%s\n\n", resultsHeading)
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
	list("Notes", r.Notes)
	return w.err
}

// The headings of the page's method and results, which its readers (the
// CLI's test of the committed page) find it by.
const (
	methodHeading  = "## Method"
	resultsHeading = "## Results"
)

// MethodSection is the method as the markdown page holds it: its heading,
// a blank line, then Method.
func MethodSection() string { return methodHeading + "\n\n" + Method() }

// markdownSpecial are the characters that would break a table cell or
// start markup.
var markdownSpecial = strings.NewReplacer(`|`, `\|`, `*`, `\*`, `_`, `\_`, "`", "\\`", `<`, `&lt;`)

// EscapeMarkdown escapes s for a markdown table cell or paragraph.
func EscapeMarkdown(s string) string { return markdownSpecial.Replace(s) }
