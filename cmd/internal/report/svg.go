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

// A bar is one impl's value in a panel of a chart.
type bar struct {
	value     float64
	low, high float64 // the whisker; drawn only when both are finite
	text      string  // the value as printed beside the bar
}

// A panel is one measure of a chart, such as time per op, with its own
// axis; a chart's panels stand side by side and share its rows.
type panel struct {
	name  string // of the measure: "time/op"
	unit  string // of the axis: "s", "B", or "" for counts
	class benchunit.Class
	count bool // whole numbers: an axis tick is never a fraction
	bars  []bar
}

// A chart is a horizontal bar chart of the impls of a group, a row per
// impl, with one or more panels.
type chart struct {
	title  string
	labels []string // the impls, a row each
	colors []string
	panels []panel
}

// Chart geometry, in pixels.
const (
	chartWidth   = 760
	chartLabelW  = 170 // impl names, left of the plots
	chartTop     = 62  // title, legend and panel names
	chartRowH    = 20
	chartBarH    = 12
	chartBottom  = 30 // the axis labels
	plotLeft     = chartLabelW + 10
	chartPadding = 24  // between charts in one SVG file
	zeroStubW    = 4   // the bar of a value of 0, which a log axis cannot place
	headLineH    = 16  // a line of an SVG file's heading
	headChars    = 100 // characters a heading line holds, at about 7 px each
	minTickGap   = 34  // between the centres of two axis labels
)

// valueWidth is the width, in pixels, of the values printed right of each
// plot of a chart of n panels: a time with its interval needs more than a
// count.
func valueWidth(n int) int {
	if n == 1 {
		return 130
	}
	return 64
}

// Colours: this project's impls stand out; the baseline is grey. The
// background is opaque so that a viewer's dark background does not hide
// the black text.
const (
	colorInproc     = "#1f6feb"
	colorBaseline   = "#6e7781"
	colorOther      = "#9ec5f4"
	colorBackground = "#ffffff"
	colorText       = "#24292f"
	colorMuted      = "#57606a"
	colorGrid       = "#d0d7de"
)

// implColor is the colour of an impl's bars.
func implColor(row Row) string {
	switch {
	case row.IsBaseline:
		return colorBaseline
	case strings.HasPrefix(row.Impl, "inproc"):
		return colorInproc
	}
	return colorOther
}

// charts returns the two charts of a group: time per op with its
// confidence interval, and memory per op, B/op and allocations side by
// side.
func (r *Report) charts(g Group) []chart {
	timeChart := chart{title: g.Title() + ": time per op"}
	memChart := chart{title: g.Title() + ": memory per op"}
	timeP := panel{name: "time/op", unit: "s", class: benchunit.Decimal}
	bytesP := panel{name: "B/op", unit: "B", class: benchunit.Binary, count: true}
	allocsP := panel{name: "allocs/op", class: benchunit.Decimal, count: true}
	nan := math.NaN()
	for _, row := range g.Rows {
		for _, c := range []*chart{&timeChart, &memChart} {
			c.labels = append(c.labels, row.Impl)
			c.colors = append(c.colors, implColor(row))
		}
		t := formatTime(row.Time.Median) + " ± " + formatPercentRange(row)
		timeP.bars = append(timeP.bars, bar{row.Time.Median, row.Time.Low, row.Time.High, t})
		bytesP.bars = append(bytesP.bars, bar{row.Bytes, nan, nan, formatBytes(row.Bytes)})
		allocsP.bars = append(allocsP.bars, bar{row.Allocs, nan, nan, formatCount(row.Allocs)})
	}
	timeChart.panels = []panel{timeP}
	memChart.panels = []panel{bytesP, allocsP}
	return []chart{timeChart, memChart}
}

// height is the chart's height in pixels.
func (c chart) height() int { return chartTop + len(c.labels)*chartRowH + chartBottom }

// WriteSVG writes, as one SVG document on an opaque background, a heading
// with the verdict, the settings, the environment and the notes, then the
// overview of every group's ratios to the baseline, then every group's
// charts, one under the other.
func (r *Report) WriteSVG(w io.Writer) error {
	var charts []chart
	for _, g := range r.Groups {
		charts = append(charts, r.charts(g)...)
	}
	ov := r.overview()
	width := max(chartWidth, ov.width())
	head := r.svgHeading()
	total := (len(head) + 1) * headLineH
	if ov.drawn() {
		total += ov.height() + chartPadding
	}
	for _, c := range charts {
		total += c.height() + chartPadding
	}
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %[1]d %[2]d">`+"\n", width, total)
	title := "localgrpc bench: " + r.Environment.Summary()
	if s := r.settingsLine(); s != "" {
		title += "; settings: " + s
	}
	fmt.Fprintf(ew, "<title>%s</title>\n", escapeXML(title))
	fmt.Fprintf(ew, `<rect width="%d" height="%d" fill="%s"/>`+"\n", width, total, colorBackground)
	fmt.Fprintf(ew, `<g font-family="sans-serif" font-size="12" fill="%s">`+"\n", colorText)
	for i, line := range head {
		weight := ""
		if i == 0 {
			weight = ` font-size="16" font-weight="bold"`
		}
		fmt.Fprintf(ew, `<text x="%d" y="%d"%s>%s</text>`+"\n", line.x, (i+1)*headLineH, weight, escapeXML(line.text))
	}
	fmt.Fprintln(ew, "</g>")
	y := (len(head) + 1) * headLineH
	if ov.drawn() {
		ov.write(ew, y, nil)
		y += ov.height() + chartPadding
	}
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

// svgOpen writes the start of an <svg> element of the given size at
// vertical offset y (0 for one that stands alone in an HTML page), with
// its title and an opaque background.
func svgOpen(w io.Writer, y, width, height int, title string) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" y="%d" width="%d" height="%d" viewBox="0 0 %[2]d %[3]d" font-family="sans-serif" font-size="12" fill="%s" role="img">`+"\n",
		y, width, height, colorText)
	fmt.Fprintf(w, "<title>%s</title>\n", escapeXML(title))
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="%s"/>`+"\n", width, height, colorBackground)
	fmt.Fprintf(w, `<text x="0" y="16" font-size="14" font-weight="bold">%s</text>`+"\n", escapeXML(title))
}

// write writes c as an <svg> element at vertical offset y (0 for one that
// stands alone in an HTML page).
func (c chart) write(w io.Writer, y int) {
	h := c.height()
	svgOpen(w, y, chartWidth, h, c.title)
	legend := []struct{ color, text string }{{colorInproc, "localgrpc inproc"}, {colorBaseline, "baseline"}, {colorOther, "others"}}
	for i, l := range legend {
		x := i * 140
		fmt.Fprintf(w, `<rect x="%d" y="26" width="10" height="10" fill="%s"/><text x="%d" y="35">%s</text>`+"\n", x, l.color, x+14, l.text)
	}
	axisY := chartTop + len(c.labels)*chartRowH
	for i, label := range c.labels {
		mid := float64(chartTop+i*chartRowH) + chartRowH/2.0
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", chartLabelW, mid, escapeXML(label))
	}
	n := len(c.panels)
	panelW := (chartWidth - plotLeft) / max(n, 1)
	for pi, p := range c.panels {
		left := float64(plotLeft + pi*panelW)
		plotW := float64(panelW - valueWidth(n))
		a := p.axis()
		x := func(v float64) float64 { return left + a.frac(v)*plotW }
		name := p.name
		if a.kind != scaleLinear {
			name += " (log scale)"
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%d" font-weight="bold" fill="%s">%s</text>`+"\n", left, chartTop-8, colorMuted, escapeXML(name))
		lastLabel := math.Inf(-1)
		for _, t := range a.ticks {
			tx := x(t)
			fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", tx, chartTop-4, tx, axisY, colorGrid)
			// A label too close to the one before (1 after 0 on a count
			// axis that spans many decades) would run into it.
			if tx-lastLabel < minTickGap {
				continue
			}
			lastLabel = tx
			fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", tx, axisY+16, colorMuted, escapeXML(tickLabel(t, p.unit, p.class)))
		}
		for i, b := range p.bars {
			label, color := c.labels[i], c.colors[i]
			mid := float64(chartTop+i*chartRowH) + chartRowH/2.0
			switch {
			case b.value > 0:
				fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
					left, mid-chartBarH/2.0, x(b.value)-left, chartBarH, color, escapeXML(label), escapeXML(b.text))
			case b.value == 0:
				// A stub at the axis's start, labelled: a log axis has no
				// 0, and a bar of no width would look like a missing one.
				fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
					left, mid-chartBarH/2.0, zeroStubW, chartBarH, color, escapeXML(label), escapeXML(b.text))
				fmt.Fprintf(w, `<text x="%.1f" y="%.1f" dominant-baseline="middle" fill="%s">0</text>`+"\n", left+zeroStubW+3, mid, colorMuted)
			}
			if b.value > 0 && b.low > 0 && !math.IsInf(b.low, 0) && !math.IsInf(b.high, 0) && !math.IsNaN(b.high) {
				l, r := x(b.low), x(b.high)
				fmt.Fprintf(w, `<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="%s" fill="none"/>`+"\n",
					l, mid, r, l, mid-4, mid+4, r, mid-4, mid+4, colorText)
			}
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", left+plotW+6, mid, escapeXML(b.text))
		}
	}
	fmt.Fprintln(w, "</svg>")
}

// A scaleKind is how an axis places values.
type scaleKind int

const (
	// scaleLinear starts at 0: values that differ by less than
	// linearSpan times, read best as lengths.
	scaleLinear scaleKind = iota
	// scaleLog is a time axis over values that differ many times: whole
	// decades, starting at least axisMargin below the smallest.
	scaleLog
	// scaleCountLog is a count axis over values that differ many times:
	// log10(1+v), so that it starts at 0, a count of 1 has a bar, and no
	// tick is a fraction.
	scaleCountLog
)

// linearSpan is the most times the largest value of a panel may be of its
// smallest positive one for a linear axis, on which the smallest bar is
// then at least 1/linearSpan of the plot: above it, a log axis.
const linearSpan = 20

// axisMargin is how far, in decades, a log time axis starts at least below
// the smallest value: at the smallest value itself its bar would have no
// length.
const axisMargin = 0.5

// An axis places a panel's values.
type axis struct {
	kind   scaleKind
	lo, hi float64 // the ends: decades for scaleLog, values for the others (lo 0)
	ticks  []float64
}

// frac is where v falls on the axis, from 0 (its start) to 1 (its end),
// clamped.
func (a axis) frac(v float64) float64 {
	var f float64
	switch a.kind {
	case scaleLog:
		if v <= 0 {
			return 0
		}
		f = (math.Log10(v) - a.lo) / (a.hi - a.lo)
	case scaleCountLog:
		f = math.Log10(1+max(v, 0)) / math.Log10(1+a.hi)
	default:
		f = v / a.hi
	}
	return math.Max(0, math.Min(1, f))
}

// axis chooses the panel's axis: linear from 0 where its values are
// within linearSpan times of one another, else a log one, for counts one
// that starts at 0 and has ticks at whole numbers only.
func (p panel) axis() axis {
	minV, maxV := math.Inf(1), 0.0
	for _, b := range p.bars {
		for _, v := range []float64{b.value, b.low, b.high} {
			if v > 0 && !math.IsInf(v, 0) {
				minV, maxV = math.Min(minV, v), math.Max(maxV, v)
			}
		}
	}
	switch {
	case maxV == 0: // nothing positive: a chart of zeros
		return axis{kind: scaleLinear, hi: 1, ticks: []float64{0, 1}}
	case maxV <= linearSpan*minV:
		return linearAxis(maxV, p.count, p.class)
	case p.count:
		return countLogAxis(maxV, p.class)
	}
	lo, hi := decades(minV, maxV)
	a := axis{kind: scaleLog, lo: float64(lo), hi: float64(hi)}
	for d := lo; d <= hi; d++ {
		a.ticks = append(a.ticks, math.Pow(10, float64(d)))
	}
	return a
}

// decades returns the powers of ten a log axis spans: from axisMargin
// decades, or a tenth of the values' span if more, below the smallest
// positive value, so that the smallest bar is long enough to see, to the
// largest, widened to whole decades.
func decades(minV, maxV float64) (lo, hi int) {
	minL, maxL := math.Log10(minV), math.Log10(maxV)
	margin := math.Max(axisMargin, (maxL-minL)/10)
	lo, hi = int(math.Floor(minL-margin)), int(math.Ceil(maxL))
	return lo, max(hi, lo+1)
}

// linearAxis is an axis from 0 to a round value at or above maxV, with 3
// to 7 ticks a round step apart: 1, 2 or 5 times a power of ten, or of
// 1024 for binary units; never below 1 for counts.
func linearAxis(maxV float64, count bool, class benchunit.Class) axis {
	base := 10.0
	if class == benchunit.Binary && maxV >= 1024 {
		base = 1024
	}
	raw := maxV / 5
	scale := 1.0
	if base == 1024 {
		for raw/scale >= 1024 {
			scale *= 1024
		}
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw/scale)))
	step := 0.0
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag * scale; step >= raw {
			break
		}
	}
	if count {
		step = math.Max(1, math.Round(step))
	}
	a := axis{kind: scaleLinear}
	for i := 0; ; i++ {
		t := float64(i) * step
		a.ticks = append(a.ticks, t)
		if t >= maxV*(1-1e-9) {
			a.hi = t
			break
		}
	}
	return a
}

// countLogAxis is a scaleCountLog axis from 0 to a tick at or above maxV,
// its ticks 0 and powers of ten (of 16 for binary units: 16 B, 256 B,
// 4 KiB).
func countLogAxis(maxV float64, class benchunit.Class) axis {
	step := 10.0
	if class == benchunit.Binary {
		step = 16
	}
	a := axis{kind: scaleCountLog, ticks: []float64{0}}
	for t := 1.0; ; t *= step {
		a.ticks = append(a.ticks, t)
		if t >= maxV {
			a.hi = t
			break
		}
	}
	return a
}

// escapeXML escapes s for XML text and attribute values.
func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// tickLabel is the label of an axis tick at v: "1µs", "100ms", "10k",
// "4KiB", "0".
func tickLabel(v float64, unit string, class benchunit.Class) string {
	if v == 0 {
		return "0"
	}
	s := benchunit.Scale(v, class) // "10.00µ"
	num := strings.TrimRightFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	suffix := s[len(num):]
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num + suffix + unit
}
