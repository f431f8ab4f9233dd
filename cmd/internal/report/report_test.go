package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
	if row.Time.Bounded() || formatInterval(row.Time) != "unbounded" {
		t.Errorf("2 runs give a bounded interval: %+v", row.Time)
	}
	if row.Significant {
		t.Errorf("2 runs against 2 are significant: p=%v", row.P)
	}
	if len(rep.Notes) != 2 {
		t.Errorf("notes: %q, want one on the intervals and one on the U test", rep.Notes)
	}
	if !row.Noisy {
		t.Error("an unbounded interval overlapping its neighbour's is not noisy")
	}
}

// A row is noisy where its interval overlaps the baseline's or a
// neighbour's, and only there: how wide it is does not matter.
func TestNoisyRows(t *testing.T) {
	inf := math.Inf(1)
	row := func(median, low, high float64) Row { return Row{Time: Interval{median, low, high}} }
	base := func(median, low, high float64) Row {
		r := row(median, low, high)
		r.IsBaseline = true
		return r
	}
	for _, tc := range []struct {
		name string
		rows []Row
		want []bool
	}{
		{"wide but apart", []Row{row(10, 1, 19), row(100, 90, 110), base(1000, 990, 1010)}, []bool{false, false, false}},
		// The baseline is compared with every row, but the ratio column
		// marks that comparison on the row, so the baseline's row is
		// marked only by its neighbours, as any row.
		{"overlaps the baseline, not its neighbour", []Row{row(10, 9, 11), row(100, 40, 500), row(200, 150, 210), row(250, 240, 260), base(300, 290, 310)},
			[]bool{false, true, true, false, false}},
		{"overlaps its neighbour", []Row{row(10, 9, 11), row(12, 10.5, 13), base(1000, 990, 1010)}, []bool{true, true, false}},
		{"touching bounds overlap", []Row{row(10, 9, 11), row(12, 11, 13)}, []bool{true, true}},
		{"unbounded", []Row{row(10, -inf, inf), base(1000, -inf, inf), row(2000, 1900, 2100)}, []bool{true, true, true}},
		{"unbounded and alone", []Row{row(10, -inf, inf)}, []bool{false}},
	} {
		markNoisy(tc.rows)
		for i, r := range tc.rows {
			if r.Noisy != tc.want[i] {
				t.Errorf("%s: row %d (%+v) noisy %v, want %v", tc.name, i, r.Time, r.Noisy, tc.want[i])
			}
		}
	}
}

// The noise line counts the noisy rows of every group and says what to do.
// A title says the runs its rows have: after an interrupted run, a range.
func TestRunsTitle(t *testing.T) {
	text := results("BenchmarkUnary/impl=IMPL-2", map[string]float64{"localhost": 50000, "unix": 30000}, []string{"localhost", "unix"}, 3) +
		results("BenchmarkUnary/impl=IMPL-2", map[string]float64{"localhost": 50000}, []string{"localhost"}, 1)
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Unary (GOMAXPROCS 2), 3–4 runs\n") {
		t.Errorf("the title does not say 3–4 runs:\n%s", b.String())
	}
	rep = testReport(t, 5)
	if got := runsTitle(rep.Groups[0]); got != "5 runs" {
		t.Errorf("title of rows of 5 runs each: %q", got)
	}
}

func TestNoiseLine(t *testing.T) {
	rep := &Report{Groups: []Group{
		{Rows: []Row{{Noisy: true}, {Noisy: true}, {}}},
		{Rows: []Row{{}}},
	}}
	if n, rows := rep.NoisyRows(); n != 2 || rows != 4 {
		t.Errorf("%d of %d rows noisy, want 2 of 4", n, rows)
	}
	line := rep.NoiseLine()
	for _, want := range []string{"2 of 4 rows (50%)", "--count", "quieter machine", "--cpu", noisyMarker} {
		if !strings.Contains(line, want) {
			t.Errorf("noise line lacks %q: %s", want, line)
		}
	}
	rep.Groups[0].Rows[0].Noisy, rep.Groups[0].Rows[1].Noisy = false, false
	if line := rep.NoiseLine(); !strings.Contains(line, "no row of 4") {
		t.Errorf("noise line without noisy rows: %s", line)
	}
	if line := (&Report{}).NoiseLine(); line != "" {
		t.Errorf("noise line without rows: %q", line)
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

// testSettings are settings as the CLI gives them.
var testSettings = []Setting{{"quick", "false"}, {"strings", "10000"}, {"count", "5"}, {"cpu", "2"}, {"baseline", "localhost"}}

func TestWriters(t *testing.T) {
	for _, runs := range []int{5, 2} { // with intervals, and with infinite ones
		rep := testReport(t, runs)
		rep.Settings = testSettings
		rep.Verdict = rep.Conclude()
		if len(rep.Verdict) == 0 {
			t.Fatal("no verdict")
		}
		// Every form has the verdict first (text last), the settings, the noise line,
		// and the noisy marker exactly on the noisy rows: all of them with
		// 2 runs, whose intervals are unbounded; with 5, the two of
		// ListStrings 0.05% apart, and not localhost, 10× slower, nor
		// Unary's, 7.5× apart.
		noisyImpl := func(impl string) bool {
			return runs < 5 || impl == "inproc-share-isolated" || impl == "iter"
		}
		noisyRows := 2
		if runs < 5 {
			noisyRows = 5
		}
		// The terminal's verdict is an answer of a line per choice;
		// every other form opens with Conclude's paragraphs.
		paragraphOpening := strings.Join(strings.Fields(rep.Verdict[0])[:6], " ")
		common := func(t *testing.T, form, text string, escape func(string) string, opening string) {
			t.Helper()
			opening = escape(opening)
			first := strings.Index(text, opening)
			if first < 0 {
				t.Errorf("%s lacks the verdict %q:\n%s", form, opening, text)
			}
			// The terminal's comes last, where it stays in view.
			if i := strings.Index(text, "localhost"); form != "text" && first >= 0 && i < first {
				t.Errorf("%s shows localhost before the verdict:\n%s", form, text)
			}
			for _, st := range rep.Settings {
				if !strings.Contains(text, st.Key) || !strings.Contains(text, st.Value) {
					t.Errorf("%s lacks the setting %s %s", form, st.Key, st.Value)
				}
			}
			if line := fmt.Sprintf("%d of 5 rows", noisyRows); !strings.Contains(text, line) {
				t.Errorf("%s with %d runs lacks the noise line %q:\n%s", form, runs, line, text)
			}
		}
		// markers checks that text marks the noisy rows, per times each,
		// as after matches them, after an interval or (in the charts) a
		// percentage.
		markers := func(t *testing.T, form, text string, after string, per int) {
			t.Helper()
			want := per * noisyRows
			marked := regexp.MustCompile(`(%|∞|\]\S*s|unbounded) ` + regexp.QuoteMeta(noisyMarker+after))
			if got := len(marked.FindAllString(text, -1)); got != want {
				t.Errorf("%s with %d runs: %d noisy markers, want %d:\n%s", form, runs, got, want, text)
			}
		}
		same := func(s string) string { return s }
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
			i := strings.Index(text, "\n\n"+answerHeader+"\n  in one process: ")
			if i < 0 {
				t.Fatalf("text does not end with the verdict:\n%s", text)
			}
			// The answer's lines, last, in the terminal's width, and
			// nothing of the paragraphs' workloads' figures.
			block := text[i+2:]
			for _, line := range strings.Split(block, "\n") {
				if utf8.RuneCountInString(line) > textWidth {
					t.Errorf("verdict line longer than %d: %q", textWidth, line)
				}
			}
			for _, g := range rep.Groups {
				if strings.Contains(block, g.Workload) {
					t.Errorf("the text verdict names the workload %s:\n%s", g.Workload, block)
				}
			}
			common(t, "text", text, same, rep.answer(textWidth)[1])
			markers(t, "text", text, "", 1)
			if !strings.Contains(text, "settings: quick false, strings 10000, count 5, cpu 2, baseline localhost\n") {
				t.Errorf("text lacks the settings line:\n%s", text)
			}
			for _, want := range []string{"ListStrings respSize=10 (GOMAXPROCS 2)", "vs localhost", "base", "v1.85.0", "connect-go (not in this binary)"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
		})
		t.Run(fmt.Sprintf("runs=%d/markdown", runs), func(t *testing.T) {
			md := write(rep.WriteMarkdown)
			everyImpl(t, rep, "markdown", md)
			rep.Made = "Made by `localgrpc bench` on 2025-01-02."
			md = write(rep.WriteMarkdown)
			rep.Made = ""
			if !strings.HasPrefix(md, "# localgrpc bench\n\nMade by \\`localgrpc bench\\` on 2025-01-02.\n\n## Verdict\n\n- ") {
				t.Errorf("markdown does not open with how it was made and the verdict:\n%s", md)
			}
			if !strings.Contains(md, "\n"+MethodSection()+"\n\n"+resultsHeading+"\n") {
				t.Errorf("markdown lacks the method before the results:\n%s", md)
			}
			common(t, "markdown", md, EscapeMarkdown, paragraphOpening)
			markers(t, "markdown", md, " |", 1)
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
			// The table alone: a header, then a row per impl.
			records := readCSV(t, write(rep.WriteCSV), csvHeader)
			if len(records) != 1+cells {
				t.Errorf("%d records, want a header and %d rows", len(records), cells)
			}
			for _, rec := range records[1:] {
				if noisy := rec[slices.Index(csvHeader, "noisy")]; noisy != strconv.FormatBool(noisyImpl(rec[3])) {
					t.Errorf("noisy %s with %d runs: %q", noisy, runs, rec)
				}
			}
			first := records[1] // ListStrings' fastest
			if want := strconv.FormatFloat(medianOf(1000, runs), 'g', 6, 64); first[3] != "inproc-share-isolated" || first[5] != want {
				t.Errorf("first row %q", first)
			}
			if bounded := first[6] != ""; bounded != (runs >= 5) {
				t.Errorf("interval bounds %q and %q with %d runs", first[6], first[7], runs)
			}
			// What the table leaves out is in the context file.
			text := write(rep.WriteCSVContext)
			common(t, "csv context", text, same, paragraphOpening)
			ctx := readCSV(t, text, csvContextHeader)
			kinds := make(map[string]int)
			for _, rec := range ctx[1:] {
				kinds[rec[0]]++
			}
			if kinds[csvVerdict] != len(rep.Verdict) || kinds[csvSetting] != len(rep.Settings) || kinds[csvNote] != len(rep.Notes) {
				t.Errorf("context records by kind %v, want %d verdict, %d setting, %d note",
					kinds, len(rep.Verdict), len(rep.Settings), len(rep.Notes))
			}
			if v := ctx[1]; v[0] != csvVerdict || v[1] != "1" || v[2] != rep.Verdict[0] {
				t.Errorf("first context record %q, want the verdict's first paragraph", v)
			}
		})
		t.Run(fmt.Sprintf("runs=%d/json", runs), func(t *testing.T) {
			var got struct {
				Verdict     []string
				Settings    []struct{ Key, Value string }
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
						Noisy                     bool
					}
				}
				Notes []string
			}
			text := write(rep.WriteJSON)
			if !strings.HasPrefix(text, "{\n  \"verdict\": [") {
				t.Errorf("json does not open with the verdict:\n%s", text)
			}
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Verdict, "\n") != strings.Join(rep.Verdict, "\n") || len(got.Settings) != len(rep.Settings) {
				t.Errorf("verdict %q, settings %q", got.Verdict, got.Settings)
			}
			for i, st := range got.Settings {
				if st.Key != rep.Settings[i].Key || st.Value != rep.Settings[i].Value {
					t.Errorf("setting %d: %+v, want %+v", i, st, rep.Settings[i])
				}
			}
			for _, g := range got.Groups {
				for _, row := range g.Rows {
					if row.Noisy != noisyImpl(row.Impl) {
						t.Errorf("%s/%s with %d runs: noisy %v", g.Name, row.Impl, runs, row.Noisy)
					}
				}
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
			if !strings.Contains(svg, "<title>localgrpc bench: go1.26.0 linux/amd64") || !strings.Contains(svg, "; settings: quick false, strings 10000") {
				t.Error("the title lacks the environment or the settings")
			}
			// The heading is wrapped: its paragraphs' words all show.
			for _, p := range append(slices.Clone(rep.Verdict), rep.settingsLine()) {
				for _, word := range strings.Fields(p) {
					if !strings.Contains(svg, escapeXML(word)) {
						t.Errorf("the heading lacks %q", word)
					}
				}
			}
			if counts["svg"] != 2+2*len(rep.Groups) {
				t.Errorf("%d svg elements, want a root, the overview and 2 charts per group", counts["svg"])
			}
			everyImpl(t, rep, "svg", svg)
			// A dot per impl in its time chart, with a whisker when there
			// are intervals, and a bar for each of its B/op and allocs/op.
			dots, bars, whiskers := 0, 0, 0
			for _, c := range drawnCharts(t, svg) {
				dots, bars, whiskers = dots+len(c.dots), bars+len(c.bars), whiskers+len(c.whiskers)
				// The charts show noise as each time's interval, not as a mark.
				for _, d := range c.dots {
					if strings.Contains(d.title, noisyMarker) {
						t.Errorf("dot %q is marked noisy", d.title)
					}
				}
			}
			if dots != cells || bars != 2*cells {
				t.Errorf("%d dots and %d bars, want %d and %d", dots, bars, cells, 2*cells)
			}
			if (runs >= 5 && whiskers != cells) || (runs < 5 && whiskers != 0) {
				t.Errorf("%d whiskers with %d runs", whiskers, runs)
			}
		})
		t.Run(fmt.Sprintf("runs=%d/html", runs), func(t *testing.T) {
			page := write(rep.WriteHTML)
			if !strings.HasPrefix(page, "<!DOCTYPE html>") {
				t.Error("no doctype")
			}
			common(t, "html", page, template.HTMLEscapeString, paragraphOpening)
			// In each table and beside each time bar.
			markers(t, "html", page, "</td>", 1)
			counts := wellFormed(t, page)
			if counts["svg"] != 1+2*len(rep.Groups) || counts["table"] != len(rep.Groups) || counts["tr"] != len(rep.Groups)+cells {
				t.Errorf("elements %v: want the overview, 2 charts and a table per group, a row per impl", counts)
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

// With several callers the suite reports a call's latency: the tables show
// it then, and only then.
func TestLatencyColumns(t *testing.T) {
	var text string
	for range 5 {
		text += "BenchmarkUnary/impl=localhost/callers=64-2\t100\t2000000 ns/op\t900000 p50-ns\t2500000 p99-ns\t1000 B/op\t10 allocs/op\n" +
			"BenchmarkUnary/impl=inproc-share-isolated/callers=64-2\t1000\t200000 ns/op\t2500 p50-ns\t16000 p99-ns\t100 B/op\t1 allocs/op\n"
	}
	rep, err := Build(testEnv, parse(t, text), "localhost", 0.9)
	if err != nil {
		t.Fatal(err)
	}
	row, _ := rep.Groups[0].row("inproc-share-isolated")
	if math.Abs(row.P50-2.5e-6) > 1e-12 || math.Abs(row.P99-16e-6) > 1e-12 {
		t.Errorf("p50 %v, p99 %v; want 2.5µs and 16µs", row.P50, row.P99)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "p99/call") || !strings.Contains(b.String(), "16.00µs") {
		t.Errorf("the text shows no latency:\n%s", b.String())
	}
	b.Reset()
	if err := rep.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",2.5e-06,1.6e-05") {
		t.Errorf("the CSV has no latency:\n%s", b.String())
	}
	// Without it, no column.
	one := strings.ReplaceAll(strings.ReplaceAll(text, "\t900000 p50-ns\t2500000 p99-ns", ""), "\t2500 p50-ns\t16000 p99-ns", "")
	if rep, err = Build(testEnv, parse(t, one), "localhost", 0.9); err != nil {
		t.Fatal(err)
	}
	if h := rep.tableHeader(); slices.Contains(h, "p99/call") {
		t.Errorf("header %q has a latency column without latencies", h)
	}
}
