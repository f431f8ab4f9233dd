package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchunit"
)

// A drawnBar is a bar as an SVG document draws it: a rect with a title
// ("impl: value").
type drawnBar struct {
	Title string  `xml:"title"`
	Width float64 `xml:"width,attr"`
	X     float64 `xml:"x,attr"`
}

// drawnBars returns every bar of doc, and the texts of the document in
// order, to find what is written beside a bar.
func drawnBars(t *testing.T, doc string) (bars []drawnBar, texts []string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = false // the HTML page's doctype and void elements
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return bars, texts
		}
		if err != nil {
			t.Fatal(err)
		}
		se, ok := tok.(xml.StartElement)
		switch {
		case !ok:
		case se.Name.Local == "rect":
			var b drawnBar
			if err := d.DecodeElement(&b, &se); err != nil {
				t.Fatal(err)
			}
			if b.Title != "" { // not a legend's swatch
				bars = append(bars, b)
				texts = append(texts, "[bar "+b.Title+"]")
			}
		case se.Name.Local == "text":
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, s)
		}
	}
}

// chartBars is drawnBars without the overview's cells, whose titles
// start with their group's title ("Unary (GOMAXPROCS 2), impl: ...").
func chartBars(t *testing.T, doc string) (bars []drawnBar, texts []string) {
	t.Helper()
	all, texts := drawnBars(t, doc)
	for _, b := range all {
		if !strings.Contains(b.Title, "(GOMAXPROCS ") {
			bars = append(bars, b)
		}
	}
	return bars, texts
}

// Every measured value shows: a time as a dot, a memory value as a bar
// with its value written after it, and a value of 0 as its value at the
// axis's 0 ("0 allocs"), in the SVG file and in the HTML page alike.
func TestEveryValueShows(t *testing.T) {
	rep := wideReport(t)
	for _, form := range []struct {
		name  string
		write func(io.Writer) error
	}{{"svg", rep.WriteSVG}, {"html", rep.WriteHTML}} {
		var b bytes.Buffer
		if err := form.write(&b); err != nil {
			t.Fatal(err)
		}
		charts := drawnCharts(t, b.String())
		if len(charts) != 2 {
			t.Fatalf("%s: %d charts, want 2", form.name, len(charts))
		}
		rows := rep.Groups[0].Rows
		if len(charts[0].dots) != len(rows) || len(charts[0].bars) != 0 {
			t.Errorf("%s: time has %d dots and %d bars, want a dot per impl", form.name, len(charts[0].dots), len(charts[0].bars))
		}
		// A bar for each positive B/op and allocs/op: all but direct's.
		if want := 2 * (len(rows) - 1); len(charts[1].bars) != want {
			t.Errorf("%s: memory has %d bars, want %d", form.name, len(charts[1].bars), want)
		}
		_, texts := drawnBars(t, b.String())
		for _, row := range rows {
			for _, want := range []string{chartTimeText(row.Time), chartBytes(row.Bytes), chartAllocs(row.Allocs)} {
				if !slices.Contains(texts, want) {
					t.Errorf("%s: %s's %q is written nowhere", form.name, row.Impl, want)
				}
			}
		}
		for _, want := range []string{"0 B", "0 allocs", "1 alloc"} {
			if !slices.Contains(texts, want) {
				t.Errorf("%s: no %q", form.name, want)
			}
		}
	}
}

// fmtLine is a result line of Unary.
func fmtLine(impl string, ns, allocs float64) string {
	ftoa := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return "BenchmarkUnary/impl=" + impl + "-2\t100\t" + ftoa(ns) + " ns/op\t" + ftoa(allocs*8) + " B/op\t" + ftoa(allocs) + " allocs/op\n"
}

// Whatever the values, a log axis holds them all between its end ticks,
// each 1, 2 or 5 times a power of ten, at most a step beyond the values,
// and shows no 0.
func TestLogAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		ticks  string
	}{
		{41e-6, 31e-3, "20µs 50µs 100µs 200µs 500µs 1ms 2ms 5ms 10ms 20ms 50ms"},
		{45e-9, 10e-3, "20ns 100ns 1µs 10µs 100µs 1ms 10ms"},
		{1e-6, 50e-6, "1µs 2µs 5µs 10µs 20µs 50µs"},
		{3e-6, 80e-6, "2µs 5µs 10µs 20µs 50µs 100µs"},
	} {
		a := logAxis(tc.lo, tc.hi)
		var labels []string
		for _, tick := range a.ticks {
			labels = append(labels, tickLabel(tick, "s", benchunit.Decimal))
		}
		if got := strings.Join(labels, " "); got != tc.ticks {
			t.Errorf("logAxis(%g, %g): ticks %q, want %q", tc.lo, tc.hi, got, tc.ticks)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		x, y := math.Pow(10, rng.Float64()*20-10), math.Pow(10, rng.Float64()*20-10)
		lo, hi := min(x, y), max(x, y)*linearSpan
		a := logAxis(lo, hi)
		if a.lo > lo || a.hi < hi || a.lo*2.5 < lo || a.hi > hi*2.5 {
			t.Fatalf("logAxis(%g, %g) runs from %g to %g", lo, hi, a.lo, a.hi)
		}
		most := max(3*minorDecades+1, int(math.Log10(a.hi/a.lo))+3)
		if a.ticks[0] != a.lo || a.ticks[len(a.ticks)-1] != a.hi || len(a.ticks) > most {
			t.Fatalf("logAxis(%g, %g): ticks %v from %g to %g", lo, hi, a.ticks, a.lo, a.hi)
		}
		for i, tick := range a.ticks {
			m := tick / math.Pow(10, math.Floor(math.Log10(tick)+1e-9))
			if i > 0 && tick <= a.ticks[i-1] || tick <= 0 || math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
				t.Fatalf("logAxis(%g, %g): ticks %v", lo, hi, a.ticks)
			}
		}
		if f := a.frac(lo); f < 0 || f > 1 {
			t.Fatalf("logAxis(%g, %g) places %g at %v", lo, hi, lo, f)
		}
	}
}

// An axis of bars is linear from 0, one of dots is log only where they
// span more than linearSpan times, its ticks rise and reach the largest
// value, and a count axis has no tick between whole numbers (no "100m"
// allocations): for any values.
func TestAxes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		count  bool
		dots   bool
		class  benchunit.Class
		kind   scaleKind
		ticks  string
	}{
		{"allocs close", []float64{8, 149}, true, false, benchunit.Decimal, scaleLinear, "0 50 100 150"},
		{"allocs few", []float64{1, 3}, true, false, benchunit.Decimal, scaleLinear, "0 1 2 3"},
		{"allocs far", []float64{0, 1, 149, 100000}, true, false, benchunit.Decimal, scaleLinear, "0 20k 40k 60k 80k 100k"},
		{"allocs zero", []float64{0, 0}, true, false, benchunit.Decimal, scaleLinear, "0 1"},
		{"allocs one", []float64{1, 1}, true, false, benchunit.Decimal, scaleLinear, "0 1"},
		{"bytes close", []float64{8552, 9000}, true, false, benchunit.Binary, scaleLinear, "0 2KiB 4KiB 6KiB 8KiB 10KiB"},
		{"bytes far", []float64{48, 800000}, true, false, benchunit.Binary, scaleLinear, "0 200KiB 400KiB 600KiB 800KiB"},
		{"time close", []float64{2e-6, 5e-6}, false, true, benchunit.Decimal, scaleLinear, "0 2µs 4µs 6µs"},
		{"time far", []float64{45e-9, 10e-3}, false, true, benchunit.Decimal, scaleLog, "20ns 100ns 1µs 10µs 100µs 1ms 10ms"},
	} {
		unit := ""
		switch {
		case tc.class == benchunit.Binary:
			unit = "B"
		case !tc.count:
			unit = "s"
		}
		p := panel{unit: unit, class: tc.class, count: tc.count, dots: tc.dots}
		for _, v := range tc.values {
			p.marks = append(p.marks, mark{value: v, low: math.NaN(), high: math.NaN()})
		}
		a := p.axis()
		var labels []string
		for _, tick := range a.ticks {
			labels = append(labels, tickLabel(tick, unit, tc.class))
		}
		if a.kind != tc.kind || strings.Join(labels, " ") != tc.ticks {
			t.Errorf("%s: axis %v with ticks %q, want %v with %q", tc.name, a.kind, labels, tc.kind, tc.ticks)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		count := rng.IntN(2) == 0
		p := panel{count: count, dots: !count, class: benchunit.Decimal}
		var top float64
		for range 1 + rng.IntN(5) {
			v := math.Pow(10, rng.Float64()*8-2)
			if count {
				v = math.Round(v)
			}
			top = max(top, v)
			p.marks = append(p.marks, mark{value: v, low: math.NaN(), high: math.NaN()})
		}
		a := p.axis()
		if a.kind == scaleLog && (!p.dots || top <= linearSpan*a.lo) {
			t.Fatalf("%v: a log axis for %v", p.marks, map[bool]string{true: "dots within linearSpan", false: "bars"}[p.dots])
		}
		if a.frac(top) < 0.999 && a.frac(top) > 0 && a.ticks[len(a.ticks)-1] < top {
			t.Fatalf("%v: the axis ends at %v, below the largest", p.marks, a.ticks[len(a.ticks)-1])
		}
		for i, tick := range a.ticks {
			if count && tick != math.Trunc(tick) {
				t.Fatalf("%v: a count axis has the tick %v", p.marks, tick)
			}
			if i > 0 && tick <= a.ticks[i-1] {
				t.Fatalf("%v: ticks %v do not rise", p.marks, a.ticks)
			}
			if a.kind != scaleLog && i == 0 && tick != 0 {
				t.Fatalf("%v: a %v axis starts at %v", p.marks, a.kind, tick)
			}
		}
		if len(a.ticks) > 22 {
			t.Fatalf("%v: %d ticks", p.marks, len(a.ticks))
		}
	}
}

func TestTickLabel(t *testing.T) {
	for _, tc := range []struct {
		v     float64
		unit  string
		class benchunit.Class
		want  string
	}{
		{1e-9, "s", benchunit.Decimal, "1ns"}, {1e-6, "s", benchunit.Decimal, "1µs"}, {2.5e-6, "s", benchunit.Decimal, "2.5µs"},
		{0.1, "s", benchunit.Decimal, "100ms"}, {1, "s", benchunit.Decimal, "1s"}, {0, "s", benchunit.Decimal, "0"},
		{1, "", benchunit.Decimal, "1"}, {100, "", benchunit.Decimal, "100"}, {1e4, "", benchunit.Decimal, "10k"}, {1e6, "", benchunit.Decimal, "1M"},
		{4096, "B", benchunit.Binary, "4KiB"}, {16, "B", benchunit.Binary, "16B"},
	} {
		if got := tickLabel(tc.v, tc.unit, tc.class); got != tc.want {
			t.Errorf("tickLabel(%g, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

// Every chart, and the SVG file, has an opaque background: its first
// drawing is a white rectangle as large as itself.
func TestOpaqueBackground(t *testing.T) {
	rep := testReport(t, 5)
	var b bytes.Buffer
	if err := rep.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	svgs := regexp.MustCompile(`<svg [^>]*width="(\d+)" height="(\d+)"[^>]*>\n<title>[^<]*</title>\n<rect (width="[^"]*" height="[^"]*") fill="#ffffff"/>`).FindAllStringSubmatch(b.String(), -1)
	if want := 2 + 2*len(rep.Groups); len(svgs) != want {
		t.Fatalf("%d svg elements open on a white rectangle, want %d:\n%s", len(svgs), want, b.String())
	}
	for _, m := range svgs {
		if m[3] != `width="`+m[1]+`" height="`+m[2]+`"` {
			t.Errorf("a chart of %s×%s px has a background of %s", m[1], m[2], m[3])
		}
	}
}

// Axis labels never run into one another: on a log axis, a 2 or a 5 is
// labelled only where it keeps clear of the powers of ten.
func TestTickLabelsApart(t *testing.T) {
	nan := math.NaN()
	timeChart := chart{title: "t", labels: []string{"a", "b"}, colors: []string{colorOther, colorOther}, panels: []panel{
		{name: "time/op", unit: "s", class: benchunit.Decimal, dots: true, marks: []mark{{41e-6, 38e-6, 45e-6, "41 µs"}, {31e-3, 30e-3, 33e-3, "31 ms"}}},
	}}
	memChart := chart{title: "m", labels: []string{"a", "b"}, colors: []string{colorOther, colorOther}, panels: []panel{
		{name: "allocs/op", class: benchunit.Decimal, count: true, marks: []mark{{0, nan, nan, "0"}, {100000, nan, nan, "100k"}}},
		{name: "B/op", unit: "B", class: benchunit.Binary, count: true, marks: []mark{{0, nan, nan, "0"}, {800000, nan, nan, "781KiB"}}},
	}}
	var b strings.Builder
	timeChart.write(&b, 0)
	memChart.write(&b, 0)
	labels := regexp.MustCompile(`<text x="([\d.]+)" y="(\d+)" text-anchor="middle"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(b.String(), -1)
	if len(labels) == 0 {
		t.Fatal("no axis labels")
	}
	for i := 1; i < len(labels); i++ {
		x0, _ := strconv.ParseFloat(labels[i-1][1], 64)
		x1, _ := strconv.ParseFloat(labels[i][1], 64)
		if x1 > x0 && x1-x0 < minTickGap {
			t.Errorf("labels %q and %q are %.1f px apart", labels[i-1][3], labels[i][3], x1-x0)
		}
	}
}
