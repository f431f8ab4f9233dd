package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
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

// minBarWidth is the least width, in pixels, of the bar of any positive
// time, and minCountBarWidth of any positive count (1 allocation on an
// axis to 100,000): clearly visible.
const (
	minBarWidth      = 20
	minCountBarWidth = 10
)

// Every measured value shows a bar, the smallest included, and a value of
// 0 a stub labelled 0, in the SVG file and in the HTML page alike.
func TestEveryValueShowsABar(t *testing.T) {
	text := ""
	for run := range 5 {
		f := 1 + 0.01*float64(run)
		text += fmtLine("direct", 45*f, 0) + fmtLine("inproc-share-inline", 300*f, 1) +
			fmtLine("localhost", 70000*f, 149) + fmtLine("bufconn", 1e7*f, 100000)
	}
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []struct {
		name  string
		write func(io.Writer) error
	}{{"svg", rep.WriteSVG}, {"html", rep.WriteHTML}} {
		var b bytes.Buffer
		if err := form.write(&b); err != nil {
			t.Fatal(err)
		}
		bars, texts := chartBars(t, b.String())
		if len(bars) != 3*4 {
			t.Fatalf("%s: %d bars, want 3 panels of 4", form.name, len(bars))
		}
		zeros := 0
		for i, bar := range bars {
			if strings.HasSuffix(bar.Title, ": "+formatCount(0)) || strings.HasSuffix(bar.Title, ": "+formatBytes(0)) {
				zeros++
				if bar.Width < zeroStubW {
					t.Errorf("%s: the stub of %q is %.1f px wide", form.name, bar.Title, bar.Width)
				}
				// The stub is labelled: the text after it is "0".
				for j, s := range texts {
					if s == "[bar "+bar.Title+"]" && (j+1 == len(texts) || texts[j+1] != "0") {
						t.Errorf("%s: the stub of %q is not labelled 0", form.name, bar.Title)
					}
				}
				continue
			}
			least := minCountBarWidth
			if strings.HasSuffix(bar.Title, "s ± 1%") {
				least = minBarWidth
			}
			if bar.Width < float64(least) {
				t.Errorf("%s: bar %d, %q, is %.1f px wide, want at least %d", form.name, i, bar.Title, bar.Width, least)
			}
		}
		if zeros != 2 {
			t.Errorf("%s: %d bars of 0, want direct's B/op and allocations", form.name, zeros)
		}
	}
}

// fmtLine is a result line of Unary.
func fmtLine(impl string, ns, allocs float64) string {
	ftoa := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return "BenchmarkUnary/impl=" + impl + "-2\t100\t" + ftoa(ns) + " ns/op\t" + ftoa(allocs*8) + " B/op\t" + ftoa(allocs) + " allocs/op\n"
}

// Whatever the values, a log time axis starts at least axisMargin decades
// below the smallest, so its bar is at least that long.
func TestDecadesLeaveRoomBelowTheSmallest(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		dlo    int
		dhi    int
	}{
		{1, 149, -1, 3},
		{3, 80, -1, 2},
		{45e-9, 15e-3, -8, -1},
		{100, 100, 1, 2},
	} {
		if lo, hi := decades(tc.lo, tc.hi); lo != tc.dlo || hi != tc.dhi {
			t.Errorf("decades(%g, %g): %d to %d, want %d to %d", tc.lo, tc.hi, lo, hi, tc.dlo, tc.dhi)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	plotW := float64(chartWidth - plotLeft - valueWidth(1))
	for range 1000 {
		lo, hi := math.Pow(10, rng.Float64()*20-10), math.Pow(10, rng.Float64()*20-10)
		dlo, dhi := decades(min(lo, hi), max(lo, hi))
		minL, maxL := math.Log10(min(lo, hi)), math.Log10(max(lo, hi))
		if float64(dlo) > minL-axisMargin || float64(dhi) < maxL {
			t.Fatalf("decades of %g and %g: %d to %d", lo, hi, dlo, dhi)
		}
		if width := (minL - float64(dlo)) / float64(dhi-dlo) * plotW; width < minBarWidth {
			t.Fatalf("decades of %g and %g: %d to %d leave the smallest bar %.1f px", lo, hi, dlo, dhi, width)
		}
	}
}

// An axis starts at 0 unless it is a log time axis, its ticks rise and
// reach the largest value, and a count axis has no tick between whole
// numbers (no "100m" allocations): for any values.
func TestAxes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		count  bool
		class  benchunit.Class
		kind   scaleKind
		ticks  string
	}{
		{"allocs close", []float64{8, 149}, true, benchunit.Decimal, scaleLinear, "0 50 100 150"},
		{"allocs few", []float64{1, 3}, true, benchunit.Decimal, scaleLinear, "0 1 2 3"},
		{"allocs far", []float64{0, 1, 149, 100000}, true, benchunit.Decimal, scaleCountLog, "0 1 10 100 1k 10k 100k"},
		{"allocs zero", []float64{0, 0}, true, benchunit.Decimal, scaleLinear, "0 1"},
		{"allocs one", []float64{1, 1}, true, benchunit.Decimal, scaleLinear, "0 1"},
		{"bytes close", []float64{8552, 9000}, true, benchunit.Binary, scaleLinear, "0 2KiB 4KiB 6KiB 8KiB 10KiB"},
		{"bytes far", []float64{48, 800000}, true, benchunit.Binary, scaleCountLog, "0 1B 16B 256B 4KiB 64KiB 1MiB"},
		{"time close", []float64{2e-6, 5e-6}, false, benchunit.Decimal, scaleLinear, "0 2µs 4µs 6µs"},
		{"time far", []float64{45e-9, 70e-6}, false, benchunit.Decimal, scaleLog, "10ns 100ns 1µs 10µs 100µs"},
	} {
		unit := ""
		switch {
		case tc.class == benchunit.Binary:
			unit = "B"
		case !tc.count:
			unit = "s"
		}
		p := panel{unit: unit, class: tc.class, count: tc.count}
		for _, v := range tc.values {
			p.bars = append(p.bars, bar{value: v, low: math.NaN(), high: math.NaN()})
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
		p := panel{count: count, class: benchunit.Decimal}
		var top float64
		for range 1 + rng.IntN(5) {
			v := math.Pow(10, rng.Float64()*8-2)
			if count {
				v = math.Round(v)
			}
			top = max(top, v)
			p.bars = append(p.bars, bar{value: v, low: math.NaN(), high: math.NaN()})
		}
		a := p.axis()
		if a.frac(top) < 0.999 && a.frac(top) > 0 && a.ticks[len(a.ticks)-1] < top {
			t.Fatalf("%v: the axis ends at %v, below the largest", p.bars, a.ticks[len(a.ticks)-1])
		}
		for i, tick := range a.ticks {
			if count && tick != math.Trunc(tick) {
				t.Fatalf("%v: a count axis has the tick %v", p.bars, tick)
			}
			if i > 0 && tick <= a.ticks[i-1] {
				t.Fatalf("%v: ticks %v do not rise", p.bars, a.ticks)
			}
			if a.kind != scaleLog && i == 0 && tick != 0 {
				t.Fatalf("%v: a %v axis starts at %v", p.bars, a.kind, tick)
			}
		}
		if len(a.ticks) > 12 {
			t.Fatalf("%v: %d ticks", p.bars, len(a.ticks))
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

// Axis labels never run into one another: on a count axis over many
// decades, 1 is too close to 0 to be labelled.
func TestTickLabelsApart(t *testing.T) {
	nan := math.NaN()
	c := chart{title: "t", labels: []string{"a", "b"}, colors: []string{colorOther, colorOther}, panels: []panel{
		{name: "allocs/op", class: benchunit.Decimal, count: true, bars: []bar{{0, nan, nan, "0"}, {100000, nan, nan, "100k"}}},
		{name: "B/op", unit: "B", class: benchunit.Binary, count: true, bars: []bar{{0, nan, nan, "0"}, {800000, nan, nan, "781KiB"}}},
	}}
	var b strings.Builder
	c.write(&b, 0)
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
