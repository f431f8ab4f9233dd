package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// A drawnChart is one <svg> chart of a document as drawn: its title, its
// axes' labelled ticks in document order, its bars (rects with a title),
// its dots (circles with a title) and its whiskers (horizontal lines).
type drawnChart struct {
	title    string
	ticks    []drawnTick
	bars     []drawnRect
	dots     []drawnDot
	whiskers []drawnLine
}

type drawnTick struct {
	x     float64
	label string
}

type drawnRect struct {
	x, y, width float64
	title       string
}

type drawnDot struct {
	cx, cy float64
	title  string
}

type drawnLine struct{ x1, y1, x2, y2 float64 }

// drawnCharts reads every chart of doc, an SVG file or an HTML page (as
// written, or as a browser serialized it), but the overview.
func drawnCharts(t *testing.T, doc string) []drawnChart {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var charts []drawnChart
	var cur *drawnChart
	attrs := func(se xml.StartElement) map[string]string {
		m := make(map[string]string)
		for _, a := range se.Attr {
			m[a.Name.Local] = a.Value
		}
		return m
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	// titleOf reads the rest of an element whose first child may be a
	// <title>, and returns that title.
	titleOf := func(se xml.StartElement) string {
		var e struct {
			Title string `xml:"title"`
		}
		if err := d.DecodeElement(&e, &se); err != nil {
			t.Fatal(err)
		}
		return e.Title
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		a := attrs(se)
		switch se.Name.Local {
		case "svg":
			charts = append(charts, drawnChart{})
			cur = &charts[len(charts)-1]
		case "title":
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			if cur != nil && cur.title == "" {
				cur.title = s
			}
		case "text":
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			if cur != nil && a["text-anchor"] == "middle" {
				cur.ticks = append(cur.ticks, drawnTick{num(a["x"]), s})
			}
		case "rect":
			if title := titleOf(se); cur != nil && title != "" {
				cur.bars = append(cur.bars, drawnRect{num(a["x"]), num(a["y"]), num(a["width"]), title})
			}
		case "circle":
			if title := titleOf(se); cur != nil && title != "" {
				cur.dots = append(cur.dots, drawnDot{num(a["cx"]), num(a["cy"]), title})
			}
		case "line":
			l := drawnLine{num(a["x1"]), num(a["y1"]), num(a["x2"]), num(a["y2"])}
			if cur != nil && l.y1 == l.y2 && l.x1 != l.x2 {
				cur.whiskers = append(cur.whiskers, l)
			}
		}
	}
	var out []drawnChart
	for _, c := range charts {
		// The root of an SVG file holds no chart, and the overview's
		// cells are ratios, not values on an axis.
		if len(c.ticks) > 0 && !strings.HasPrefix(c.title, "Time per op relative to") {
			out = append(out, c)
		}
	}
	return out
}

// tickValue parses an axis label: "0", "20µs", "4KiB", "10k".
func tickValue(label string) (float64, error) {
	s := strings.TrimSuffix(strings.TrimSuffix(label, "s"), "B")
	scale := 1.0
	for _, p := range []struct {
		prefix string
		scale  float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"n", 1e-9}, {"µ", 1e-6}, {"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}} {
		if strings.HasSuffix(s, p.prefix) {
			s, scale = strings.TrimSuffix(s, p.prefix), p.scale
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * scale, err
}

// A drawnAxis is a panel's axis, read from its labelled ticks: how it
// places values, if it places them linearly or logarithmically.
type drawnAxis struct {
	values, xs []float64
	scale      string // "linear", "log", or "neither"
}

// at is where the axis places v, from its first and last labelled ticks.
func (a drawnAxis) at(v float64) float64 {
	n := len(a.xs) - 1
	f := (v - a.values[0]) / (a.values[n] - a.values[0])
	if a.scale == "log" {
		f = math.Log(v/a.values[0]) / math.Log(a.values[n]/a.values[0])
	}
	return a.xs[0] + f*(a.xs[n]-a.xs[0])
}

// contains says whether x lies on the axis, between its end ticks.
func (a drawnAxis) contains(x float64) bool {
	return x >= a.xs[0]-0.5 && x <= a.xs[len(a.xs)-1]+0.5
}

// axes splits a chart's labelled ticks into its panels' axes, a new axis
// where the values stop rising, and tells each axis's scale by whether
// its ticks lie where a linear or a log scale through its end ticks
// would place them.
func (c drawnChart) axes(t *testing.T) []drawnAxis {
	t.Helper()
	var axes []drawnAxis
	for _, tick := range c.ticks {
		v, err := tickValue(tick.label)
		if err != nil {
			t.Fatalf("%s: tick label %q: %v", c.title, tick.label, err)
		}
		if n := len(axes); n == 0 || v <= axes[n-1].values[len(axes[n-1].values)-1] {
			axes = append(axes, drawnAxis{})
		}
		a := &axes[len(axes)-1]
		a.values, a.xs = append(a.values, v), append(a.xs, tick.x)
	}
	for i := range axes {
		a := &axes[i]
		if len(a.values) < 2 {
			t.Fatalf("%s: an axis with one labelled tick, %v", c.title, a.values)
		}
		fits := func(scale string) bool {
			a.scale = scale
			for j, v := range a.values {
				if math.Abs(a.at(v)-a.xs[j]) > 1 {
					return false
				}
			}
			return true
		}
		switch {
		case fits("linear"):
		case a.values[0] > 0 && fits("log"):
		default:
			a.scale = "neither"
		}
	}
	return axes
}

// axisAt is the axis of the panel that holds x.
func axisAt(axes []drawnAxis, x float64) (drawnAxis, bool) {
	for _, a := range axes {
		if a.contains(x) {
			return a, true
		}
	}
	return drawnAxis{}, false
}

// checkChartAxes checks that every chart of doc reads true on its axes:
//   - an axis that is not linear shows no 0 (a log axis has none);
//   - a bar lies on a linear axis, starting at its 0;
//   - each impl's time has a dot where its median falls on the axis;
//   - each bounded interval is a whisker from its low to its high end, on
//     the axis.
func checkChartAxes(t *testing.T, rep *Report, doc string) {
	t.Helper()
	charts := drawnCharts(t, doc)
	if len(charts) != 2*len(rep.Groups) {
		t.Fatalf("%d charts, want 2 per group", len(charts))
	}
	for _, c := range charts {
		axes := c.axes(t)
		for _, a := range axes {
			if a.scale != "linear" && a.values[0] == 0 {
				t.Errorf("%s: a %s axis shows 0: ticks %v", c.title, a.scale, a.values)
			}
		}
		for _, b := range c.bars {
			a, ok := axisAt(axes, b.x)
			switch {
			case !ok:
				t.Errorf("%s: bar %q at x=%.1f is on no axis", c.title, b.title, b.x)
			case a.scale != "linear":
				t.Errorf("%s: bar %q lies on a %s axis", c.title, b.title, a.scale)
			case a.values[0] != 0 || math.Abs(b.x-a.xs[0]) > 1:
				t.Errorf("%s: bar %q starts at x=%.1f, not at the axis's 0", c.title, b.title, b.x)
			case !a.contains(b.x + b.width):
				t.Errorf("%s: bar %q ends past its axis", c.title, b.title)
			}
		}
		for _, w := range c.whiskers {
			if a, ok := axisAt(axes, w.x1); !ok || !a.contains(w.x2) {
				t.Errorf("%s: a whisker from x=%.1f to %.1f lies off its axis", c.title, w.x1, w.x2)
			}
		}
	}
	for gi, g := range rep.Groups {
		c := charts[2*gi]
		axes := c.axes(t)
		for _, row := range g.Rows {
			if err := checkDot(c, axes, row); err != nil {
				t.Errorf("%s: %s: %v", c.title, row.Impl, err)
			}
		}
	}
}

// checkDot checks that row has a dot at its median in chart c, and a
// whisker over its interval when it is bounded.
func checkDot(c drawnChart, axes []drawnAxis, row Row) error {
	for _, d := range c.dots {
		if !strings.HasPrefix(d.title, row.Impl+": ") {
			continue
		}
		a, ok := axisAt(axes, d.cx)
		if !ok {
			return fmt.Errorf("its dot at x=%.1f is on no axis", d.cx)
		}
		if want := a.at(row.Time.Median); math.Abs(d.cx-want) > 1 {
			return fmt.Errorf("its dot is at x=%.1f, its median %g at x=%.1f on the %s axis", d.cx, row.Time.Median, want, a.scale)
		}
		if !row.Time.Bounded() {
			return nil
		}
		for _, w := range c.whiskers {
			if w.y1 != d.cy {
				continue
			}
			lo, hi := a.at(row.Time.Low), a.at(row.Time.High)
			if math.Abs(w.x1-lo) > 1 || math.Abs(w.x2-hi) > 1 {
				return fmt.Errorf("its whisker spans x=%.1f to %.1f, its interval [%g, %g] x=%.1f to %.1f", w.x1, w.x2, row.Time.Low, row.Time.High, lo, hi)
			}
			return nil
		}
		return fmt.Errorf("its interval [%g, %g] has no whisker", row.Time.Low, row.Time.High)
	}
	return fmt.Errorf("no dot")
}

// wideResults are 5 runs of one group whose times span six decades and
// whose allocations run from 0 to 100,000, in the Go benchmark format.
func wideResults() string {
	text := ""
	for run := range 5 {
		f := 1 + 0.01*float64(run)
		text += fmtLine("direct", 45*f, 0) + fmtLine("inproc-share-inline", 300*f, 1) +
			fmtLine("localhost", 70000*f, 149) + fmtLine("bufconn", 1e7*f, 100000)
	}
	return text
}

// wideReport is a report of one group whose times span six decades and
// whose allocations run from 0 to 100,000, as a full run's do.
func wideReport(t *testing.T) *Report {
	t.Helper()
	rep, err := Build(testEnv, parse(t, wideResults()), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The charts read true on their axes, in the SVG file and the HTML page,
// whether values span many decades or few, with intervals or without.
func TestChartAxes(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  *Report
	}{{"wide", wideReport(t)}, {"close", testReport(t, 5)}, {"no intervals", testReport(t, 2)}} {
		for _, form := range []struct {
			name  string
			write func(*Report, io.Writer) error
		}{{"svg", (*Report).WriteSVG}, {"html", (*Report).WriteHTML}} {
			t.Run(tc.name+"/"+form.name, func(t *testing.T) {
				var b strings.Builder
				if err := form.write(tc.rep, &b); err != nil {
					t.Fatal(err)
				}
				checkChartAxes(t, tc.rep, b.String())
			})
		}
	}
}
