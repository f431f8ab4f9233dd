package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
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

// minBarWidth is the least width, in pixels, of the bar of any positive
// value: clearly visible.
const minBarWidth = 20

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
		bars, texts := drawnBars(t, b.String())
		if len(bars) != 2*4 {
			t.Fatalf("%s: %d bars, want 2 charts of 4", form.name, len(bars))
		}
		zeros := 0
		for i, bar := range bars {
			if strings.HasSuffix(bar.Title, ": "+formatCount(0)) {
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
			if bar.Width < minBarWidth {
				t.Errorf("%s: bar %d, %q, is %.1f px wide, want at least %d", form.name, i, bar.Title, bar.Width, minBarWidth)
			}
		}
		if zeros != 1 {
			t.Errorf("%s: %d bars of 0, want direct's allocations", form.name, zeros)
		}
	}
}

// fmtLine is a result line of Unary.
func fmtLine(impl string, ns, allocs float64) string {
	ftoa := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return "BenchmarkUnary/impl=" + impl + "-2\t100\t" + ftoa(ns) + " ns/op\t" + ftoa(allocs*8) + " B/op\t" + ftoa(allocs) + " allocs/op\n"
}

// Whatever the values, the axis starts at least axisMargin decades below
// the smallest, so its bar is at least that long.
func TestDecadesLeaveRoomBelowTheSmallest(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		lo, hi int
	}{
		{[]float64{1, 149}, -1, 3}, // 1 allocation: a bar, not the axis's start
		{[]float64{3, 8}, -1, 1},
		{[]float64{0, 0}, 0, 1},
		{[]float64{45e-9, 15e-3}, -8, -1},
		{[]float64{100, 100}, 1, 2},
	} {
		c := chart{}
		for _, v := range tc.values {
			c.bars = append(c.bars, bar{value: v, low: math.NaN(), high: math.NaN()})
		}
		if lo, hi := c.decades(); lo != tc.lo || hi != tc.hi {
			t.Errorf("decades of %v: %d to %d, want %d to %d", tc.values, lo, hi, tc.lo, tc.hi)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		lo, hi := math.Pow(10, rng.Float64()*20-10), math.Pow(10, rng.Float64()*20-10)
		c := chart{bars: []bar{{value: lo, low: math.NaN(), high: math.NaN()}, {value: hi, low: math.NaN(), high: math.NaN()}}}
		dlo, dhi := c.decades()
		minL, maxL := math.Log10(min(lo, hi)), math.Log10(max(lo, hi))
		if float64(dlo) > minL-axisMargin || float64(dhi) < maxL {
			t.Fatalf("decades of %g and %g: %d to %d", lo, hi, dlo, dhi)
		}
		if width := (minL - float64(dlo)) / float64(dhi-dlo) * (plotRight - plotLeft); width < minBarWidth {
			t.Fatalf("decades of %g and %g: %d to %d leave the smallest bar %.1f px", lo, hi, dlo, dhi, width)
		}
	}
}
