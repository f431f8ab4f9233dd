package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// testEnv is a fixed environment, so that outputs are reproducible.
var testEnv = Environment{
	GoVersion: "go1.26.0", GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU <x> & co",
	NumCPU: 2, GOMAXPROCS: []int{2},
	Modules: []Module{{Name: "grpc-go", Path: "google.golang.org/grpc", Version: "v1.85.0"}, {Name: "connect-go", Path: "connectrpc.com/connect"}},
}

// parse reads results in the Go benchmark format, tidied as benchstat
// reads them.
func parse(t *testing.T, text string) []*benchfmt.Result {
	t.Helper()
	var results []*benchfmt.Result
	r := benchfmt.NewReader(strings.NewReader(text), "test")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatal(rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return results
}

// results makes runs results of each impl of bench, impl i's times
// around base[i] ns/op (runs distinct values, so the U test can tell
// apart impls that differ).
func results(bench string, base map[string]float64, order []string, runs int) string {
	var b strings.Builder
	for run := range runs {
		for _, impl := range order {
			name := strings.Replace(bench, "IMPL", impl, 1)
			fmt.Fprintf(&b, "%s\t100\t%g ns/op\t%d B/op\t%d allocs/op\n", name, base[impl]*(1+0.01*float64(run)), int(base[impl]), int(base[impl]/10))
		}
	}
	return b.String()
}

// medianOf is the median seconds per op of the runs results makes around
// base ns/op.
func medianOf(base float64, runs int) float64 {
	return base * (1 + 0.01*float64(runs-1)/2) / 1e9
}

var (
	implOrder = []string{"localhost", "inproc-share-isolated", "iter"}
	implTimes = map[string]float64{"localhost": 10000, "inproc-share-isolated": 1000, "iter": 1000.5}
)

func testReport(t *testing.T, runs int) *Report {
	t.Helper()
	text := results("BenchmarkListStrings/impl=IMPL/respSize=10-2", implTimes, implOrder, runs) +
		results("BenchmarkUnary/impl=IMPL-2", map[string]float64{"direct": 40, "inproc-share-inline": 300}, []string{"direct", "inproc-share-inline"}, runs)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestBuild(t *testing.T) {
	rep := testReport(t, 5)
	if len(rep.Groups) != 2 {
		t.Fatalf("%d groups, want 2", len(rep.Groups))
	}
	g := rep.Groups[0]
	if g.Workload != "ListStrings" || g.Params != "respSize=10" || g.GOMAXPROCS != 2 || g.Name() != "ListStrings/respSize=10-2" {
		t.Errorf("group %+v, name %q", g, g.Name())
	}
	var impls []string
	for _, r := range g.Rows {
		impls = append(impls, r.Impl)
	}
	if got, want := strings.Join(impls, " "), "inproc-share-isolated iter localhost"; got != want {
		t.Errorf("rows in order %q, want fastest first %q", got, want)
	}
	fast, base := g.Rows[0], g.Rows[2]
	if !base.IsBaseline || base.Ratio != 1 || fast.IsBaseline {
		t.Errorf("baseline rows: %+v, %+v", base, fast)
	}
	if want := 1020.0 / 10200; math.Abs(fast.Ratio-want) > 1e-9 {
		t.Errorf("ratio %v, want %v (of medians)", fast.Ratio, want)
	}
	if !fast.Significant || fast.P >= 0.05 {
		t.Errorf("a 10× difference over 5 runs each is not significant: p=%v", fast.P)
	}
	if fast.Runs != 5 || fast.Time.Median != 1020e-9 || !fast.Time.Bounded() || fast.Time.Low > fast.Time.Median || fast.Time.High < fast.Time.Median {
		t.Errorf("time of %s: %+v", fast.Impl, fast.Time)
	}
	if fast.Bytes != 1000 || fast.Allocs != 100 {
		t.Errorf("memory of %s: %v B/op, %v allocs/op", fast.Impl, fast.Bytes, fast.Allocs)
	}

	// Unary has no localhost: no ratios.
	for _, r := range rep.Groups[1].Rows {
		if r.Ratio != 0 || r.IsBaseline || r.Significant || r.P != 1 {
			t.Errorf("row without a baseline in its group: %+v", r)
		}
	}
	if len(rep.Notes) != 0 {
		t.Errorf("notes with 5 runs: %q", rep.Notes)
	}
}

func TestBuildTooFewRuns(t *testing.T) {
	rep := testReport(t, 2)
	row := rep.Groups[0].Rows[0]
	if row.Time.Bounded() || row.Time.Percent() != "∞" {
		t.Errorf("2 runs give a bounded interval: %+v", row.Time)
	}
	if row.Significant {
		t.Errorf("2 runs against 2 are significant: p=%v", row.P)
	}
	if len(rep.Notes) != 2 {
		t.Errorf("notes: %q, want one on the intervals and one on the U test", rep.Notes)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		confidence float64
	}{
		{"no impl", "BenchmarkUnary-2\t1\t5 ns/op\n", 0.9},
		{"no time", "BenchmarkUnary/impl=x\t1\t5 B/op\n", 0.9},
		{"confidence 0", "BenchmarkUnary/impl=x\t1\t5 ns/op\n", 0},
		{"confidence 1", "BenchmarkUnary/impl=x\t1\t5 ns/op\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Build(testEnv, parse(t, tc.text), "x", tc.confidence); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestTickLabel(t *testing.T) {
	for _, tc := range []struct {
		decade int
		unit   string
		want   string
	}{
		{-9, "s", "1ns"}, {-6, "s", "1µs"}, {-5, "s", "10µs"}, {-1, "s", "100ms"}, {0, "s", "1s"},
		{0, "", "1"}, {2, "", "100"}, {4, "", "10k"}, {6, "", "1M"},
	} {
		if got := tickLabel(tc.decade, tc.unit); got != tc.want {
			t.Errorf("tickLabel(%d, %q) = %q, want %q", tc.decade, tc.unit, got, tc.want)
		}
	}
}

// everyImpl fails t if text lacks one of the report's impls.
func everyImpl(t *testing.T, rep *Report, form, text string) {
	t.Helper()
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if !strings.Contains(text, r.Impl) {
				t.Errorf("%s lacks impl %s", form, r.Impl)
			}
		}
	}
}

// wellFormed fails t unless doc is well-formed XML, and returns how many
// elements of each name it holds.
func wellFormed(t *testing.T, doc string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	counts := make(map[string]int)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return counts
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
}

func TestWriters(t *testing.T) {
	for _, runs := range []int{5, 2} { // with intervals, and with infinite ones
		rep := testReport(t, runs)
		cells := 0
		for _, g := range rep.Groups {
			cells += len(g.Rows)
		}
		write := func(f func(io.Writer) error) string {
			var b bytes.Buffer
			if err := f(&b); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		t.Run(fmt.Sprintf("runs=%d/text", runs), func(t *testing.T) {
			text := write(rep.WriteText)
			everyImpl(t, rep, "text", text)
			for _, want := range []string{"ListStrings respSize=10 (GOMAXPROCS 2)", "vs localhost", "base", "v1.85.0", "connect-go (not in this binary)"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
		})
		t.Run(fmt.Sprintf("runs=%d/markdown", runs), func(t *testing.T) {
			md := write(rep.WriteMarkdown)
			everyImpl(t, rep, "markdown", md)
			rows := 0
			for _, line := range strings.Split(md, "\n") {
				if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| impl") {
					rows++
				}
			}
			if rows != cells {
				t.Errorf("%d table rows, want %d:\n%s", rows, cells, md)
			}
		})
		t.Run(fmt.Sprintf("runs=%d/csv", runs), func(t *testing.T) {
			records, err := csv.NewReader(strings.NewReader(write(rep.WriteCSV))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(records[0], ",") != strings.Join(csvHeader, ",") {
				t.Errorf("header %q", records[0])
			}
			if len(records) != 1+cells {
				t.Errorf("%d records, want a header and %d rows", len(records), cells)
			}
			first := records[1] // ListStrings' fastest
			if want := strconv.FormatFloat(medianOf(1000, runs), 'g', 6, 64); first[3] != "inproc-share-isolated" || first[5] != want {
				t.Errorf("first row %q", first)
			}
			if bounded := first[6] != ""; bounded != (runs >= 5) {
				t.Errorf("interval bounds %q and %q with %d runs", first[6], first[7], runs)
			}
		})
		t.Run(fmt.Sprintf("runs=%d/json", runs), func(t *testing.T) {
			var got struct {
				Environment struct {
					CPU     string
					Modules []struct{ Name, Version string }
				}
				Groups []struct {
					Name string
					Rows []struct {
						Impl                      string
						SecPerOp                  float64
						SecPerOpLow, SecPerOpHigh *float64
						Ratio                     *float64
					}
				}
			}
			if err := json.Unmarshal([]byte(write(rep.WriteJSON)), &got); err != nil {
				t.Fatal(err)
			}
			if got.Environment.CPU != testEnv.CPU || len(got.Environment.Modules) != 2 || len(got.Groups) != 2 {
				t.Errorf("decoded %+v", got)
			}
			row := got.Groups[0].Rows[0]
			if row.Impl != "inproc-share-isolated" || math.Abs(row.SecPerOp-medianOf(1000, runs)) > 1e-15 || row.Ratio == nil {
				t.Errorf("first row %+v", row)
			}
			if bounded := row.SecPerOpLow != nil && row.SecPerOpHigh != nil; bounded != (runs >= 5) {
				t.Errorf("interval bounds %v, %v with %d runs", row.SecPerOpLow, row.SecPerOpHigh, runs)
			}
			if got.Groups[1].Rows[0].Ratio != nil {
				t.Error("a ratio in a group without the baseline")
			}
		})
		t.Run(fmt.Sprintf("runs=%d/svg", runs), func(t *testing.T) {
			svg := write(rep.WriteSVG)
			counts := wellFormed(t, svg)
			if counts["svg"] != 1+2*len(rep.Groups) {
				t.Errorf("%d svg elements, want a root and 2 charts per group", counts["svg"])
			}
			everyImpl(t, rep, "svg", svg)
			// A bar per impl in each chart, and a whisker per time bar when there are intervals.
			if want := 2 * cells; counts["rect"]-3*2*len(rep.Groups) != want {
				t.Errorf("%d bars, want %d", counts["rect"]-3*2*len(rep.Groups), want)
			}
			if whiskers := strings.Count(svg, `stroke="#24292f"`); (runs >= 5 && whiskers != cells) || (runs < 5 && whiskers != 0) {
				t.Errorf("%d whiskers with %d runs", whiskers, runs)
			}
		})
		t.Run(fmt.Sprintf("runs=%d/html", runs), func(t *testing.T) {
			page := write(rep.WriteHTML)
			if !strings.HasPrefix(page, "<!DOCTYPE html>") {
				t.Error("no doctype")
			}
			counts := wellFormed(t, page)
			if counts["svg"] != 2*len(rep.Groups) || counts["table"] != len(rep.Groups) || counts["tr"] != len(rep.Groups)+cells {
				t.Errorf("elements %v: want 2 charts and a table per group, a row per impl", counts)
			}
			for _, banned := range []string{"http://", "https://", "<script", "<link"} {
				if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
					t.Errorf("page is not self-contained: has %q", banned)
				}
			}
			everyImpl(t, rep, "html", page)
			if !strings.Contains(page, "Test CPU &lt;x&gt; &amp; co") {
				t.Error("the CPU's name is not escaped")
			}
		})
	}
}
