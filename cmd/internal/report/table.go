package report

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
)

// tableHeader and tableRow are the columns of a group's table, shared by
// the text, markdown and HTML forms so that all three say the same.
func (r *Report) tableHeader() []string {
	h := []string{"impl", "time/op", "interval", "B/op", "allocs/op", "vs " + r.Baseline, "p"}
	if r.hasLatency() {
		h = append(h, "p50/call", "p99/call")
	}
	return h
}

func (r *Report) tableRow(row Row) []string {
	cells := tableRow(row)
	if r.hasLatency() {
		cells = append(cells, formatLatency(row.P50), formatLatency(row.P99))
	}
	return cells
}

// formatLatency is a call's latency, or "-" where there is none.
func formatLatency(sec float64) string {
	if sec == 0 {
		return "-"
	}
	return formatTime(sec)
}

// numericColumns says which of the table's columns hold numbers, to align
// them right.
func (r *Report) numericColumns() []bool {
	n := []bool{false, true, true, true, true, true, true}
	if r.hasLatency() {
		n = append(n, true, true)
	}
	return n
}

func tableRow(row Row) []string {
	return []string{
		row.Impl,
		formatTime(row.Time.Median),
		formatIntervalCell(row),
		formatBytes(row.Bytes),
		formatCount(row.Allocs),
		formatRatio(row),
		formatP(row),
	}
}

func formatTime(sec float64) string  { return benchunit.Scale(sec, benchunit.Decimal) + "s" }
func formatBytes(b float64) string   { return benchunit.Scale(b, benchunit.Binary) + "B" }
func formatCount(n float64) string   { return benchunit.Scale(n, benchunit.Decimal) }
func formatPercent(c float64) string { return strconv.FormatFloat(100*c, 'g', -1, 64) + "%" }

// formatInterval is the interval as "[low, high]" in the median's unit,
// so that it reads against the time/op column:
// "[40.1, 43.0]µs". A median is positive but its interval need not be
// symmetric, which a ± would claim. It is "unbounded" with too few runs.
func formatInterval(i Interval) string {
	if !i.Bounded() {
		return "unbounded"
	}
	s := benchunit.CommonScale([]float64{i.Median}, benchunit.Decimal)
	num := func(v float64) string { return strconv.FormatFloat(v/s.Factor, 'f', s.Prec, 64) }
	return "[" + num(i.Low) + ", " + num(i.High) + "]" + s.Prefix + "s"
}

// formatIntervalCell is the row's interval column: the interval, then
// the noisy marker if the row is noisy.
func formatIntervalCell(row Row) string {
	if row.Noisy {
		return formatInterval(row.Time) + " " + noisyMarker
	}
	return formatInterval(row.Time)
}

// formatRatio is the row's ratio to the baseline: "base" for the
// baseline, "-" without one, and "~" after a ratio that is within noise.
func formatRatio(row Row) string {
	switch {
	case row.IsBaseline:
		return "base"
	case row.Ratio == 0:
		return "-"
	}
	s := fmt.Sprintf("%.3g×", row.Ratio)
	if !row.Significant {
		s += " ~"
	}
	return s
}

// formatP is the row's p-value, or "-" when it was not compared.
func formatP(row Row) string {
	if row.IsBaseline || row.Ratio == 0 {
		return "-"
	}
	return fmt.Sprintf("p=%.3f", row.P)
}

// legend explains the table's columns and the noisy marker.
func (r *Report) legend() string {
	return fmt.Sprintf("Medians of each impl's runs, fastest first; the interval is the median's %s confidence interval "+
		"(unbounded with too few runs); \"vs %s\" is the ratio of medians, with ~ where a Mann-Whitney U test finds no significant difference (p ≥ 0.05). "+
		noisyMarker+" marks a row whose interval overlaps the baseline's or that of the row just above or below it: "+
		"distrust that ratio or that order.",
		formatPercent(r.Confidence), r.Baseline)
}

// NoiseLine says what share of the rows is noisy and what to do about
// it, for the top of the tables; "" when r has no rows.
func (r *Report) NoiseLine() string {
	noisy, rows := r.NoisyRows()
	switch {
	case rows == 0:
		return ""
	case noisy == 0:
		return fmt.Sprintf("Noise: no row of %d has an interval overlapping those it is compared with.", rows)
	}
	return fmt.Sprintf("Noise: %d of %d rows (%.0f%%) have an interval overlapping those they are compared with (marked %s); "+
		"to narrow the intervals, rerun with a higher --count, on a quieter machine, "+
		"or with a --cpu below the machine's CPUs so that other work has a CPU of its own.",
		noisy, rows, 100*float64(noisy)/float64(rows), noisyMarker)
}

// runsTitle is how many runs g's rows have: "5 runs", or "3–4 runs"
// after an interrupted run left some rows a run short.
func runsTitle(g Group) string {
	lo, hi := g.Rows[0].Runs, g.Rows[0].Runs
	for _, row := range g.Rows {
		lo, hi = min(lo, row.Runs), max(hi, row.Runs)
	}
	return runsText(lo, hi)
}

// settingsLine is the run's settings in one line: "quick true, strings
// 1000, ...", or "" when there are none.
func (r *Report) settingsLine() string {
	parts := make([]string, len(r.Settings))
	for i, s := range r.Settings {
		parts[i] = s.Key + " " + s.Value
	}
	return strings.Join(parts, ", ")
}
