package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// A Report is the comparison of the impls of every workload of one run.
type Report struct {
	// Verdict is what to pick and why, in sentences whose figures come
	// from the groups below; every format opens with it. Build leaves it
	// empty: Conclude writes it, for the caller to set. The page and the
	// terminal show it worded again from the groups, where it is set.
	Verdict []string
	// Settings are the run's settings as its caller names them ("count",
	// "5"), in the order to show them; every format shows them. Build
	// leaves them empty.
	Settings []Setting
	// Made says how the report was made, in a sentence: the command, the
	// date and the machine. The markdown page opens with it; Build leaves
	// it empty.
	Made string
	// Environment is where the results were measured.
	Environment Environment
	// Baseline is the impl every ratio compares with.
	Baseline string
	// Confidence is the confidence level the intervals were asked for.
	Confidence float64
	// Groups are the comparisons, one per workload and parameters, in
	// the order their first results came.
	Groups []Group
	// FloorGap is what is left to gain against the floors, in sentences
	// like the verdict's: for maintainers, so the terminal shows it only
	// when asked. Build leaves it empty: LeftToGain writes it. The page
	// and the terminal show it worded again from the groups, where it is
	// set.
	FloorGap []string
	// Notes are benchmath's warnings about the statistics, such as too
	// few runs for an interval, each once.
	Notes []string
}

// A Setting is one setting of the run, such as a flag's value.
type Setting struct {
	Key, Value string
}

// A Group compares the impls of one workload with one set of parameters.
type Group struct {
	// Workload is the benchmark's name without "Benchmark", e.g.
	// "ListStrings".
	Workload string
	// Params are the sub-benchmark keys other than impl, e.g.
	// "respSize=10"; empty if there are none.
	Params string
	// GOMAXPROCS is the value the results were measured with.
	GOMAXPROCS int
	// Rows are the impls, fastest median first.
	Rows []Row
}

// Name is the group's benchmark name without the impl: the workload, its
// params, and the GOMAXPROCS suffix when GOMAXPROCS is not 1, as `go test`
// names benchmarks.
func (g Group) Name() string {
	name := g.Workload
	if g.Params != "" {
		name += "/" + g.Params
	}
	if g.GOMAXPROCS != 1 {
		name += "-" + strconv.Itoa(g.GOMAXPROCS)
	}
	return name
}

// Title is the group's name for people: "ListStrings respSize=10
// (GOMAXPROCS 2)".
func (g Group) Title() string {
	t := g.Workload
	if g.Params != "" {
		t += " " + strings.ReplaceAll(g.Params, "/", " ")
	}
	return fmt.Sprintf("%s (GOMAXPROCS %d)", t, g.GOMAXPROCS)
}

// A Row is what a group says of one impl.
type Row struct {
	// Impl is the impl's name.
	Impl string
	// Runs is how many results the row summarizes.
	Runs int
	// Time is the seconds per op: median and confidence interval. The
	// interval is infinite when there are too few runs for it.
	Time Interval
	// Bytes and Allocs are the medians of B/op and allocs/op.
	Bytes, Allocs float64
	// P50 and P99 are the medians of the runs' p50 and p99 latency of
	// one call, in seconds, which the suite reports with several callers;
	// 0 without them.
	P50, P99 float64
	// Ratio is Time's median over the baseline's, or 0 when the group
	// has no baseline.
	Ratio float64
	// P is the p-value of a Mann-Whitney U test of the difference from
	// the baseline; 1 for the baseline itself and when there is none.
	P float64
	// Significant says whether P is below benchmath's alpha (0.05), that
	// is whether the difference from the baseline is more than noise.
	Significant bool
	// IsBaseline marks the baseline's own row.
	IsBaseline bool
	// Noisy says whether the row's interval overlaps the interval of a
	// row it is compared with: the baseline's, or that of the row just
	// above or below it. The order or ratio of those two rows may then be
	// noise. An unbounded interval overlaps every other.
	Noisy bool

	// times are the seconds per op of each run, so that Conclude can
	// test the difference of any two rows, not only from the baseline.
	times []float64
}

// An Interval is a median and its confidence interval.
type Interval struct {
	Median, Low, High float64
}

// hasLatency says whether any row has a call's latency percentiles, which
// the tables then show.
func (r *Report) hasLatency() bool {
	for _, g := range r.Groups {
		for _, row := range g.Rows {
			if row.P99 > 0 {
				return true
			}
		}
	}
	return false
}

// Bounded says whether the interval is finite: with too few runs for the
// requested confidence, benchmath gives ±∞.
func (i Interval) Bounded() bool {
	return !math.IsInf(i.Low, 0) && !math.IsInf(i.High, 0)
}

// Overlaps says whether the intervals i and o share any value.
func (i Interval) Overlaps(o Interval) bool {
	return i.Low <= o.High && o.Low <= i.High
}

// noisyMarker marks a noisy row in every table; the legend explains it.
const noisyMarker = "!"

// Units of the values Build reads, after benchfmt has tidied them.
const (
	unitTime   = "sec/op"
	unitBytes  = "B/op"
	unitAllocs = "allocs/op"
	unitP50    = "p50-sec"
	unitP99    = "p99-sec"
)

// Build compares the impls of results, which are named as this project's
// benchmarks are ("Workload/impl=NAME/key=value-GOMAXPROCS") and whose
// units are tidied as benchfmt.Reader tidies them. The intervals are at
// level confidence; ratios compare with the impl baseline.
func Build(env Environment, results []*benchfmt.Result, baseline string, confidence float64) (*Report, error) {
	if confidence <= 0 || confidence >= 1 {
		return nil, fmt.Errorf("confidence %v is not between 0 and 1", confidence)
	}
	type cellKey struct{ group, impl string }
	type cell struct {
		runs   int
		values map[string][]float64 // by unit
	}
	cells := make(map[cellKey]*cell)
	var groups []*Group
	implOrder := make(map[string][]string) // per group, as results came
	for _, r := range results {
		g, impl, err := parseName(r.Name)
		if err != nil {
			return nil, err
		}
		key := cellKey{g.Name(), impl}
		c := cells[key]
		if c == nil {
			c = &cell{values: make(map[string][]float64)}
			cells[key] = c
			if implOrder[key.group] == nil {
				groups = append(groups, &g)
			}
			implOrder[key.group] = append(implOrder[key.group], impl)
		}
		c.runs++
		for _, v := range r.Values {
			c.values[v.Unit] = append(c.values[v.Unit], v.Value)
		}
	}

	rep := &Report{Environment: env, Baseline: baseline, Confidence: confidence}
	note := func(warnings []error) {
		for _, w := range warnings {
			if !slices.Contains(rep.Notes, w.Error()) {
				rep.Notes = append(rep.Notes, w.Error())
			}
		}
	}
	thresholds := benchmath.DefaultThresholds
	summarize := func(vs []float64) (*benchmath.Sample, benchmath.Summary) {
		s := benchmath.NewSample(vs, &thresholds)
		return s, benchmath.AssumeNothing.Summary(s, confidence)
	}
	for _, g := range groups {
		name := g.Name()
		samples := make(map[string]*benchmath.Sample)
		for _, impl := range implOrder[name] {
			c := cells[cellKey{name, impl}]
			if len(c.values[unitTime]) == 0 {
				return nil, fmt.Errorf("%s/impl=%s has no %s", name, impl, unitTime)
			}
			sample, t := summarize(c.values[unitTime])
			note(t.Warnings)
			_, bytes := summarize(c.values[unitBytes])
			_, allocs := summarize(c.values[unitAllocs])
			_, p50 := summarize(c.values[unitP50])
			_, p99 := summarize(c.values[unitP99])
			samples[impl] = sample
			g.Rows = append(g.Rows, Row{
				Impl:   impl,
				Runs:   c.runs,
				Time:   Interval{t.Center, t.Lo, t.Hi},
				Bytes:  orZero(bytes.Center),
				Allocs: orZero(allocs.Center),
				P50:    orZero(p50.Center),
				P99:    orZero(p99.Center),
				P:      1,
				times:  c.values[unitTime],
			})
		}
		slices.SortStableFunc(g.Rows, func(a, b Row) int { return cmp.Compare(a.Time.Median, b.Time.Median) })
		if base := slices.IndexFunc(g.Rows, func(r Row) bool { return r.Impl == baseline }); base >= 0 {
			b := g.Rows[base]
			for i := range g.Rows {
				r := &g.Rows[i]
				r.Ratio = r.Time.Median / b.Time.Median
				if i == base {
					r.IsBaseline = true
					continue
				}
				c := benchmath.AssumeNothing.Compare(samples[b.Impl], samples[r.Impl])
				note(c.Warnings)
				r.P, r.Significant = c.P, c.P < c.Alpha
			}
		}
		markNoisy(g.Rows)
		rep.Groups = append(rep.Groups, *g)
	}
	return rep, nil
}

// markNoisy sets Noisy on the rows, fastest first, whose interval
// overlaps the baseline's or a neighbour's: the comparisons a reader
// makes in a table are with the baseline, by the ratio column, and with
// the next row, by the order.
func markNoisy(rows []Row) {
	base := slices.IndexFunc(rows, func(r Row) bool { return r.IsBaseline })
	for i := range rows {
		overlaps := func(j int) bool { return j >= 0 && j < len(rows) && j != i && rows[i].Time.Overlaps(rows[j].Time) }
		rows[i].Noisy = overlaps(base) || overlaps(i-1) || overlaps(i+1)
	}
}

// NoisyRows are how many rows of r are noisy, and how many rows r has.
func (r *Report) NoisyRows() (noisy, rows int) {
	for _, g := range r.Groups {
		for _, row := range g.Rows {
			rows++
			if row.Noisy {
				noisy++
			}
		}
	}
	return noisy, rows
}

// orZero is v, or 0 for the NaN that summarizing no values gives (a
// result without -benchmem has no B/op).
func orZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// parseName splits a result's name into its group and its impl.
func parseName(name benchfmt.Name) (Group, string, error) {
	base, parts := name.Parts()
	g := Group{Workload: strings.TrimPrefix(string(base), "Benchmark"), GOMAXPROCS: 1}
	var impl string
	var params []string
	for _, p := range parts {
		switch {
		case p[0] == '-':
			n, err := strconv.Atoi(string(p[1:]))
			if err != nil || n < 1 {
				return Group{}, "", fmt.Errorf("benchmark %s: bad GOMAXPROCS suffix %q", name, p)
			}
			g.GOMAXPROCS = n
		case strings.HasPrefix(string(p), "/impl="):
			impl = string(p[len("/impl="):])
		default:
			params = append(params, string(p[1:]))
		}
	}
	if impl == "" {
		return Group{}, "", errors.New("benchmark " + name.String() + " has no impl=NAME part")
	}
	g.Params = strings.Join(params, "/")
	return g, impl, nil
}
