package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"

	"golang.org/x/perf/benchunit"
)

// A bar is one impl in a chart.
type bar struct {
	label     string
	value     float64
	low, high float64 // the whisker; drawn only when both are finite
	text      string  // the value as printed beside the chart
	color     string
}

// A chart is a horizontal bar chart on a log scale.
type chart struct {
	title string
	bars  []bar
	unit  string // of the axis: "s" for seconds, "" for counts
}

// Chart geometry, in pixels.
const (
	chartWidth   = 760
	chartLabelW  = 170 // impl names, left of the plot
	chartValueW  = 130 // values, right of the plot
	chartTop     = 44  // title and legend
	chartRowH    = 20
	chartBarH    = 12
	chartBottom  = 30 // the axis labels
	plotLeft     = chartLabelW + 10
	plotRight    = chartWidth - chartValueW
	chartPadding = 24  // between charts in one SVG file
	zeroStubW    = 4   // the bar of a value of 0, which a log axis cannot place
	headLineH    = 16  // a line of an SVG file's heading
	headChars    = 100 // characters a heading line holds, at about 7 px each
)

// axisMargin is how far, in decades, the axis starts at least below the
// smallest value: at the smallest value itself its bar would have no
// length (a value of 1 on an axis starting at 1).
const axisMargin = 0.5

// Bar colours: this project's impls stand out; the baseline is grey.
const (
	colorInproc   = "#1f6feb"
	colorBaseline = "#6e7781"
	colorOther    = "#9ec5f4"
)

// charts returns the two charts of a group: time per op with its
// confidence interval, and allocations per op.
func (r *Report) charts(g Group) []chart {
	timeChart := chart{title: g.Title() + ": time per op", unit: "s"}
	allocChart := chart{title: g.Title() + ": allocations per op"}
	for _, row := range g.Rows {
		color := colorOther
		switch {
		case row.IsBaseline:
			color = colorBaseline
		case strings.HasPrefix(row.Impl, "inproc"):
			color = colorInproc
		}
		t := formatTime(row.Time.Median) + " ± " + formatPercentRange(row)
		timeChart.bars = append(timeChart.bars, bar{row.Impl, row.Time.Median, row.Time.Low, row.Time.High, t, color})
		nan := math.NaN()
		allocChart.bars = append(allocChart.bars, bar{row.Impl, row.Allocs, nan, nan, formatCount(row.Allocs), color})
	}
	return []chart{timeChart, allocChart}
}

// height is the chart's height in pixels.
func (c chart) height() int { return chartTop + len(c.bars)*chartRowH + chartBottom }

// WriteSVG writes, as one SVG document, a heading with the verdict, the
// settings, the environment and the notes, then every group's charts, one
// under the other.
func (r *Report) WriteSVG(w io.Writer) error {
	var charts []chart
	for _, g := range r.Groups {
		charts = append(charts, r.charts(g)...)
	}
	head := r.svgHeading()
	total := (len(head) + 1) * headLineH
	for _, c := range charts {
		total += c.height() + chartPadding
	}
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %[1]d %[2]d">`+"\n", chartWidth, total)
	title := "localgrpc bench: " + r.Environment.Summary()
	if s := r.settingsLine(); s != "" {
		title += "; settings: " + s
	}
	fmt.Fprintf(ew, "<title>%s</title>\n", escapeXML(title))
	fmt.Fprintln(ew, `<g font-family="sans-serif" font-size="12">`)
	for i, line := range head {
		weight := ""
		if i == 0 {
			weight = ` font-size="16" font-weight="bold"`
		}
		fmt.Fprintf(ew, `<text x="%d" y="%d"%s>%s</text>`+"\n", line.x, (i+1)*headLineH, weight, escapeXML(line.text))
	}
	fmt.Fprintln(ew, "</g>")
	y := (len(head) + 1) * headLineH
	for _, c := range charts {
		c.write(ew, y)
		y += c.height() + chartPadding
	}
	fmt.Fprintln(ew, "</svg>")
	return ew.err
}

// A headLine is a line of an SVG file's heading, indented by x pixels
// (SVG collapses leading spaces).
type headLine struct {
	text string
	x    int
}

// svgHeading is the lines of an SVG file's heading, wrapped, since SVG
// text does not wrap itself: a title, the verdict's paragraphs as
// bullets, the settings, the environment and the notes.
func (r *Report) svgHeading() []headLine {
	lines := []headLine{{"localgrpc bench", 0}}
	paragraph := func(bullet, text string) {
		for i, l := range wrap(text, headChars) {
			switch {
			case i > 0 && bullet != "":
				lines = append(lines, headLine{l, 12})
			case i == 0:
				lines = append(lines, headLine{bullet + l, 0})
			default:
				lines = append(lines, headLine{l, 0})
			}
		}
	}
	for _, v := range r.Verdict {
		paragraph("• ", v)
	}
	if s := r.settingsLine(); s != "" {
		paragraph("", "Settings: "+s)
	}
	paragraph("", "Environment: "+r.Environment.Summary())
	for _, n := range r.Notes {
		paragraph("", "Note: "+n)
	}
	return lines
}

// write writes c as an <svg> element at vertical offset y (0 for one that
// stands alone in an HTML page).
func (c chart) write(w io.Writer, y int) {
	h := c.height()
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" y="%d" width="%d" height="%d" viewBox="0 0 %[2]d %[3]d" font-family="sans-serif" font-size="12" role="img">`+"\n", y, chartWidth, h)
	fmt.Fprintf(w, "<title>%s</title>\n", escapeXML(c.title))
	fmt.Fprintf(w, `<text x="0" y="16" font-size="14" font-weight="bold">%s</text>`+"\n", escapeXML(c.title))
	legend := []struct{ color, text string }{{colorInproc, "localgrpc inproc"}, {colorBaseline, "baseline"}, {colorOther, "others"}}
	for i, l := range legend {
		x := i * 140
		fmt.Fprintf(w, `<rect x="%d" y="26" width="10" height="10" fill="%s"/><text x="%d" y="35">%s</text>`+"\n", x, l.color, x+14, l.text)
	}

	lo, hi := c.decades()
	x := func(v float64) float64 {
		f := (math.Log10(v) - float64(lo)) / float64(hi-lo)
		return plotLeft + math.Max(0, math.Min(1, f))*(plotRight-plotLeft)
	}
	axisY := chartTop + len(c.bars)*chartRowH
	for d := lo; d <= hi; d++ {
		tx := x(math.Pow(10, float64(d)))
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d0d7de"/>`+"\n", tx, chartTop-4, tx, axisY)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="#57606a">%s</text>`+"\n", tx, axisY+16, escapeXML(tickLabel(d, c.unit)))
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="end" fill="#57606a">log scale</text>`+"\n", chartWidth, axisY+16)

	for i, b := range c.bars {
		top := chartTop + i*chartRowH
		mid := float64(top) + chartRowH/2.0
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", chartLabelW, mid, escapeXML(b.label))
		switch {
		case b.value > 0:
			fmt.Fprintf(w, `<rect x="%d" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
				plotLeft, mid-chartBarH/2.0, x(b.value)-plotLeft, chartBarH, b.color, escapeXML(b.label), escapeXML(b.text))
		case b.value == 0:
			// 0 is nowhere on a log axis: a stub at its start, labelled.
			fmt.Fprintf(w, `<rect x="%d" y="%.1f" width="%d" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
				plotLeft, mid-chartBarH/2.0, zeroStubW, chartBarH, b.color, escapeXML(b.label), escapeXML(b.text))
			fmt.Fprintf(w, `<text x="%d" y="%.1f" dominant-baseline="middle" fill="#57606a">0</text>`+"\n", plotLeft+zeroStubW+3, mid)
		}
		if b.value > 0 && b.low > 0 && !math.IsInf(b.low, 0) && !math.IsInf(b.high, 0) && !math.IsNaN(b.high) {
			l, r := x(b.low), x(b.high)
			fmt.Fprintf(w, `<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="#24292f" fill="none"/>`+"\n",
				l, mid, r, l, mid-4, mid+4, r, mid-4, mid+4)
		}
		fmt.Fprintf(w, `<text x="%d" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", plotRight+8, mid, escapeXML(b.text))
	}
	fmt.Fprintln(w, "</svg>")
}

// decades returns the powers of ten the axis spans: from axisMargin
// decades, or a tenth of the values' span if more, below the smallest
// positive value or finite interval bound, so that the smallest bar is
// long enough to see, to the largest, widened to whole decades.
func (c chart) decades() (lo, hi int) {
	minV, maxV := math.Inf(1), math.Inf(-1)
	for _, b := range c.bars {
		for _, v := range []float64{b.value, b.low, b.high} {
			if v > 0 && !math.IsInf(v, 0) {
				minV, maxV = math.Min(minV, v), math.Max(maxV, v)
			}
		}
	}
	if math.IsInf(minV, 0) { // nothing positive: a chart of zeros
		return 0, 1
	}
	minL, maxL := math.Log10(minV), math.Log10(maxV)
	margin := math.Max(axisMargin, (maxL-minL)/10)
	lo, hi = int(math.Floor(minL-margin)), int(math.Ceil(maxL))
	return lo, max(hi, lo+1)
}

// escapeXML escapes s for XML text and attribute values.
func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// tickLabel is the label of the axis tick at 10^decade: "1µs", "100ms",
// "10k".
func tickLabel(decade int, unit string) string {
	s := benchunit.Scale(math.Pow(10, float64(decade)), benchunit.Decimal) // "10.00µ"
	num := strings.TrimRightFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	suffix := s[len(num):]
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num + suffix + unit
}
