package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"
)

// implStats is what the table says about one impl in one group.
type implStats struct {
	impl   string
	sec    *benchmath.Sample
	time   benchmath.Summary // of sec
	bytes  benchmath.Summary
	allocs benchmath.Summary
}

// writeTable prints one table per workload and parameters (the benchmark
// name without /impl, grouped as `benchstat -col /impl` groups it): each
// impl's median sec/op with its confidence interval at level confidence,
// its median B/op and allocs/op, and the ratio of its median sec/op to the
// baseline impl's with the p-value of the difference, fastest first. The
// statistics are benchmath's, as benchstat's are: medians, order-statistic
// intervals and Mann-Whitney U tests, with no assumption about the
// distribution of the samples.
func writeTable(w io.Writer, results []*benchfmt.Result, baseline string, confidence float64) error {
	filter, err := benchproc.NewFilter("*")
	if err != nil {
		return err
	}
	// Parsed together, so that .fullname leaves /impl out.
	var parser benchproc.ProjectionParser
	implBy, err := parser.Parse("/impl", filter)
	if err != nil {
		return err
	}
	groupBy, err := parser.Parse(".fullname", filter)
	if err != nil {
		return err
	}
	implField := implBy.Fields()[0]

	type cell struct{ group, impl benchproc.Key }
	values := make(map[cell]map[string][]float64) // by unit
	var groups []benchproc.Key
	implsOf := make(map[benchproc.Key][]benchproc.Key)
	for _, r := range results {
		c := cell{groupBy.Project(r), implBy.Project(r)}
		if values[c] == nil {
			values[c] = make(map[string][]float64)
			if implsOf[c.group] == nil {
				groups = append(groups, c.group)
			}
			implsOf[c.group] = append(implsOf[c.group], c.impl)
		}
		for _, v := range r.Values {
			values[c][v.Unit] = append(values[c][v.Unit], v.Value)
		}
	}
	benchproc.SortKeys(groups)

	assume := benchmath.AssumeNothing
	thresholds := benchmath.DefaultThresholds
	summarize := func(vs []float64) (*benchmath.Sample, benchmath.Summary) {
		s := benchmath.NewSample(vs, &thresholds)
		return s, assume.Summary(s, confidence)
	}
	var notes []string
	note := func(warnings []error) {
		for _, w := range warnings {
			if !slices.Contains(notes, w.Error()) {
				notes = append(notes, w.Error())
			}
		}
	}

	for _, g := range groups {
		var stats []implStats
		for _, im := range implsOf[g] {
			v := values[cell{g, im}]
			st := implStats{impl: im.Get(implField)}
			st.sec, st.time = summarize(v["sec/op"])
			_, st.bytes = summarize(v["B/op"])
			_, st.allocs = summarize(v["allocs/op"])
			note(st.time.Warnings)
			stats = append(stats, st)
		}
		slices.SortStableFunc(stats, func(a, b implStats) int { return cmp.Compare(a.time.Center, b.time.Center) })
		base := slices.IndexFunc(stats, func(s implStats) bool { return s.impl == baseline })

		fmt.Fprintf(w, "%s (n=%d; medians, intervals at >=%g%% confidence)\n", g.StringValues(), len(stats[0].sec.Values), 100*confidence)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  impl\tsec/op\tCI\tB/op\tallocs/op\tvs %s\tp\n", baseline)
		for _, s := range stats {
			ratio, p := "-", "-"
			if base >= 0 {
				b := stats[base]
				ratio = fmt.Sprintf("%.3g×", s.time.Center/b.time.Center)
				if s.impl == baseline {
					ratio = "base"
				} else {
					c := assume.Compare(b.sec, s.sec)
					note(c.Warnings)
					p = c.String()
					if c.P >= c.Alpha {
						ratio += " ~" // no significant difference
					}
				}
			}
			fmt.Fprintf(tw, "  %s\t%ss\t± %s\t%sB\t%s\t%s\t%s\n", s.impl,
				benchunit.Scale(s.time.Center, benchunit.Decimal), s.time.PctRangeString(),
				benchunit.Scale(s.bytes.Center, benchunit.Binary), benchunit.Scale(s.allocs.Center, benchunit.Decimal),
				ratio, p)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	return nil
}
