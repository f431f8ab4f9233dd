package report

// The charts are SVG written by hand rather than by gonum.org/v1/plot,
// which draws error bars and log axes as well, because the page reads
// better this way:
//   - every mark carries a <title> tooltip and every overview column a
//     link, which gonum.org/v1/plot's SVG canvas cannot write;
//   - the text is the page's own sans-serif at its size, where
//     gonum.org/v1/plot sets its own fonts in points on a canvas sized in
//     inches;
//   - the page stays small and self-contained;
//   - gonum.org/v1/plot v0.10.1 would add 19 modules to the cmd module's
//     go list -m all (PDF and image writers, fonts, gioui.org, glfw) for
//     three kinds of mark.

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchunit"
)

// A mark is one impl's value in a panel of a chart: a dot with a whisker
// in a panel of dots, a bar in a panel of bars.
type mark struct {
	value     float64
	low, high float64 // the whisker; drawn only when both are finite
	text      string  // the value as printed beside the mark
}

// A panel is one measure of a chart, such as time per op, with its own
// axis; a chart's panels stand side by side and share its rows.
type panel struct {
	name  string // of the measure: "time/op"
	unit  string // of the axis: "s", "B", or "" for counts
	class benchunit.Class
	count bool // whole numbers: an axis tick is never a fraction
	// dots draws each value as a dot with its interval as a whisker, on a
	// log axis where the values span more than linearSpan times; without
	// it, each value is a bar on a linear axis from 0, since a bar's
	// length means nothing on a log axis.
	dots  bool
	marks []mark
}

// A chart is a chart of the impls of a group, a row per impl, with one or
// more panels.
type chart struct {
	title  string
	key    string   // how to read its marks, right of the legend
	labels []string // the impls, a row each
	colors []string
	panels []panel
}

// Chart geometry, in pixels.
const (
	chartWidth    = 760
	chartLabelW   = 170 // impl names, left of the plots
	chartTop      = 62  // title, legend and panel names
	chartRowH     = 20
	chartBarH     = 12
	chartBottom   = 30 // the axis labels
	plotLeft      = chartLabelW + 10
	chartPadding  = 24  // between charts in one SVG file
	dotR          = 4.5 // a median's dot
	minBarW       = 1.0 // the bar of a positive value
	headLineH     = 16  // a line of an SVG file's heading
	headChars     = 100 // characters a heading line holds, at about 7 px each
	minTickGap    = 34  // between the centres of two axis labels
	minorTickGap  = 46  // between a 2 or 5 tick's label and any other
	barTextW      = 84  // right of a panel of bars: "100k allocs" after the longest
	dotsTextW     = 190 // right of a panel of dots: "41.2µs [38.1µs, 45.0µs]"
	barTextOffset = 4   // between a bar's end and its value
)

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

// implColor is the colour of an impl's marks.
func implColor(row Row) string {
	switch {
	case row.IsBaseline:
		return colorBaseline
	case strings.HasPrefix(row.Impl, "inproc"):
		return colorInproc
	}
	return colorOther
}

// charts returns the two charts of a group: time per op, each median a
// dot with its confidence interval as a whisker, and memory per op, B/op
// and allocations side by side as bars.
func (r *Report) charts(g Group) []chart {
	level := strconv.FormatFloat(100*r.Confidence, 'g', 3, 64)
	timeChart := chart{title: g.Title() + ": time per op", key: "dot: median; whisker: its " + level + "% interval"}
	memChart := chart{title: g.Title() + ": memory per op", key: "bars from 0"}
	timeP := panel{name: "time/op", unit: "s", class: benchunit.Decimal, dots: true}
	bytesP := panel{name: "B/op", unit: "B", class: benchunit.Binary, count: true}
	allocsP := panel{name: "allocs/op", class: benchunit.Decimal, count: true}
	nan := math.NaN()
	for _, row := range g.Rows {
		for _, c := range []*chart{&timeChart, &memChart} {
			c.labels = append(c.labels, row.Impl)
			c.colors = append(c.colors, implColor(row))
		}
		timeP.marks = append(timeP.marks, mark{row.Time.Median, row.Time.Low, row.Time.High, chartTimeText(row.Time)})
		bytesP.marks = append(bytesP.marks, mark{row.Bytes, nan, nan, chartBytes(row.Bytes)})
		allocsP.marks = append(allocsP.marks, mark{row.Allocs, nan, nan, chartAllocs(row.Allocs)})
	}
	timeChart.panels = []panel{timeP}
	memChart.panels = []panel{bytesP, allocsP}
	return []chart{timeChart, memChart}
}

// chartTime is a time as a chart prints it: "41.2 µs".
func chartTime(sec float64) string {
	num, prefix := trimScaled(benchunit.Scale(sec, benchunit.Decimal))
	return num + " " + prefix + "s"
}

// chartTimeText is a median and its interval: "41.2 µs [38.1 µs, 45 µs]",
// or "41.2 µs, no interval" where too few runs bound it.
func chartTimeText(i Interval) string {
	if !i.Bounded() {
		return chartTime(i.Median) + ", no interval"
	}
	return chartTime(i.Median) + " [" + chartTime(i.Low) + ", " + chartTime(i.High) + "]"
}

// chartBytes is a size: "0 B", "1.2 KiB".
func chartBytes(b float64) string {
	num, prefix := trimScaled(benchunit.Scale(b, benchunit.Binary))
	return num + " " + prefix + "B"
}

// chartAllocs is a count of allocations: "0 allocs", "1 alloc", "100k allocs".
func chartAllocs(n float64) string {
	if n == 1 {
		return "1 alloc"
	}
	num, prefix := trimScaled(benchunit.Scale(n, benchunit.Decimal))
	return num + prefix + " allocs"
}

// trimScaled splits a number benchunit scaled into its digits, with no
// trailing zeros, and its prefix: "1.200Ki" is "1.2" and "Ki".
func trimScaled(s string) (num, prefix string) {
	num = strings.TrimRightFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	prefix = s[len(num):]
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num, prefix
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
	if c.key != "" {
		fmt.Fprintf(w, `<text x="%d" y="35" fill="%s">%s</text>`+"\n", len(legend)*140, colorMuted, escapeXML(c.key))
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
		plotW := float64(panelW - barTextW)
		if p.dots {
			plotW = float64(panelW - dotsTextW)
		}
		a := p.axis()
		x := func(v float64) float64 { return left + a.frac(v)*plotW }
		name := p.name + ", from 0"
		if a.kind == scaleLog {
			name = p.name + " (log scale)"
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%d" font-weight="bold" fill="%s">%s</text>`+"\n", left, chartTop-8, colorMuted, escapeXML(name))
		labelled := a.labelled(x)
		for ti, t := range a.ticks {
			tx := x(t)
			fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", tx, chartTop-4, tx, axisY, colorGrid)
			if labelled[ti] {
				fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", tx, axisY+16, colorMuted, escapeXML(tickLabel(t, p.unit, p.class)))
			}
		}
		for i, m := range p.marks {
			mid := float64(chartTop+i*chartRowH) + chartRowH/2.0
			tip := escapeXML(c.labels[i] + ": " + m.text)
			if p.dots {
				writeDot(w, m, x, mid, c.colors[i], tip)
				fmt.Fprintf(w, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", left+plotW+8, mid, escapeXML(m.text))
				continue
			}
			// A value of 0 has no bar, only its value at the axis's 0, so
			// that it reads as 0 and not as a bar that failed to draw.
			// A positive value too small for the axis (1 allocation
			// beside 100,000) is a bar of minBarW, so that it does not
			// read as 0.
			if m.value > 0 {
				fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.2f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
					left, mid-chartBarH/2.0, max(x(m.value)-left, minBarW), chartBarH, c.colors[i], tip)
			}
			// A halo keeps the value legible where it crosses a grid line.
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" dominant-baseline="middle" stroke="%s" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
				x(m.value)+barTextOffset, mid, colorBackground, escapeXML(m.text))
		}
	}
	fmt.Fprintln(w, "</svg>")
}

// writeDot writes m as a dot at its value, over a whisker from its low
// to its high end when both are finite.
func writeDot(w io.Writer, m mark, x func(float64) float64, mid float64, color, tip string) {
	if m.low > 0 && !math.IsInf(m.low, 0) && !math.IsInf(m.high, 0) && !math.IsNaN(m.high) {
		l, r := x(m.low), x(m.high)
		fmt.Fprintf(w, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="%s"/>`, l, mid, r, mid, colorText)
		for _, e := range []float64{l, r} {
			fmt.Fprintf(w, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="%s"/>`, e, mid-4, e, mid+4, colorText)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, `<circle cx="%.2f" cy="%.1f" r="%.1f" fill="%s" stroke="%s"><title>%s</title></circle>`+"\n",
		x(m.value), mid, dotR, color, colorText, tip)
}

// A scaleKind is how an axis places values.
type scaleKind int

const (
	// scaleLinear starts at 0: the only scale on which a bar's length
	// is its value, and the one for dots whose values differ by less than
	// linearSpan times.
	scaleLinear scaleKind = iota
	// scaleLog places dots whose values differ many times, from a 1, 2
	// or 5 times a power of ten to another; it has no 0.
	scaleLog
)

// linearSpan is the most times the largest value of a panel of dots may
// be of its smallest for a linear axis: above it, a log axis.
const linearSpan = 20

// An axis places a panel's values.
type axis struct {
	kind   scaleKind
	lo, hi float64 // the values at its ends; lo is 0 on a linear axis
	ticks  []float64
	minor  []bool // of each tick: a 2 or 5 on a log axis, labelled only where room is left
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
		f = math.Log(v/a.lo) / math.Log(a.hi/a.lo)
	default:
		f = v / a.hi
	}
	return math.Max(0, math.Min(1, f))
}

// labelled says of each tick whether it has a label: the ends always,
// then each other tick whose label keeps clear of those already placed,
// the powers of ten before the 2s and 5s between them.
func (a axis) labelled(x func(float64) float64) []bool {
	done := make([]bool, len(a.ticks))
	var xs []float64
	place := func(i int, gap float64) {
		tx := x(a.ticks[i])
		for _, o := range xs {
			if math.Abs(o-tx) < gap {
				return
			}
		}
		done[i], xs = true, append(xs, tx)
	}
	last := len(a.ticks) - 1
	place(0, 0)
	place(last, 0)
	for _, minor := range []bool{false, true} {
		gap := float64(minTickGap)
		if minor {
			gap = minorTickGap
		}
		for i := 1; i < last; i++ {
			if a.minor[i] == minor {
				place(i, gap)
			}
		}
	}
	return done
}

// axis chooses the panel's axis: for bars, linear from 0; for dots,
// linear from 0 where their values and intervals are within linearSpan
// times of one another, else a log one.
func (p panel) axis() axis {
	minV, maxV := math.Inf(1), 0.0
	for _, m := range p.marks {
		for _, v := range []float64{m.value, m.low, m.high} {
			if v > 0 && !math.IsInf(v, 0) {
				minV, maxV = math.Min(minV, v), math.Max(maxV, v)
			}
		}
	}
	switch {
	case maxV == 0: // nothing positive: a chart of zeros
		return axis{kind: scaleLinear, hi: 1, ticks: []float64{0, 1}, minor: make([]bool, 2)}
	case !p.dots || maxV <= linearSpan*minV:
		return linearAxis(maxV, p.count, p.class)
	}
	return logAxis(minV, maxV)
}

// logAxis is a scaleLog axis from the largest of 1, 2 or 5 times a power
// of ten at or below minV to the smallest at or above maxV, with a tick at
// each power of ten between, and at each 2 and 5 where it spans at most
// minorDecades.
func logAxis(minV, maxV float64) axis {
	const eps = 1e-9 // of rounding in m×10^d
	var ts []float64
	// From a decade below minV's, so that some value is at or below it.
	for d := math.Floor(math.Log10(minV)) - 1; len(ts) == 0 || ts[len(ts)-1] < maxV*(1-eps); d++ {
		for _, m := range []float64{1, 2, 5} {
			t := m * math.Pow(10, d)
			if t <= minV*(1+eps) {
				ts = ts[:0] // a later start still holds minV
			}
			if len(ts) == 0 || ts[len(ts)-1] < maxV*(1-eps) {
				ts = append(ts, t)
			}
		}
	}
	a := axis{kind: scaleLog, lo: ts[0], hi: ts[len(ts)-1]}
	withMinor := math.Log10(a.hi/a.lo) <= minorDecades
	for i, t := range ts {
		decade := math.Abs(math.Log10(t)-math.Round(math.Log10(t))) < eps
		if decade || withMinor || i == 0 || i == len(ts)-1 {
			a.ticks, a.minor = append(a.ticks, t), append(a.minor, !decade)
		}
	}
	return a
}

// minorDecades is the most decades a log axis spans with ticks at 2 and 5
// times each power of ten: over more, they would crowd it.
const minorDecades = 4

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
		a.ticks, a.minor = append(a.ticks, t), append(a.minor, false)
		if t >= maxV*(1-1e-9) {
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
	num, prefix := trimScaled(benchunit.Scale(v, class)) // "10.00µ"
	return num + prefix + unit
}
