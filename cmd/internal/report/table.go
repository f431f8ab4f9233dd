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
	h := []string{"impl", "time/op", "±", "B/op", "allocs/op", "vs " + r.Baseline, "p"}
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
		formatPercentRange(row),
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

// formatPercentRange is the row's ± column: the interval's half-width in
// percent, then the noisy marker if the row is noisy.
func formatPercentRange(row Row) string {
	if row.Noisy() {
		return row.Time.Percent() + " " + noisyMarker
	}
	return row.Time.Percent()
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

// legend explains the table's columns in a sentence.
func (r *Report) legend() string {
	return fmt.Sprintf("Medians of each impl's runs, fastest first; ± is the %s confidence interval; "+
		"\"vs %s\" is the ratio of medians, with ~ where a Mann-Whitney U test finds no significant difference (p ≥ 0.05).",
		formatPercent(r.Confidence), r.Baseline)
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
