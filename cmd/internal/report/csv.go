package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// csvHeader names the columns of WriteCSV. Times are in seconds, so that
// a spreadsheet can compute with them; empty cells mean "none".
var csvHeader = []string{
	"workload", "params", "gomaxprocs", "impl", "runs",
	"sec_per_op", "sec_per_op_low", "sec_per_op_high",
	"bytes_per_op", "allocs_per_op", "ratio", "p", "significant", "baseline",
}

// WriteCSV writes the report as CSV: a header, then one row per impl of
// each group. An interval bound is empty when there were too few runs for
// it, and ratio, p and significant are empty in a group without the
// baseline.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	for _, g := range r.Groups {
		for _, row := range g.Rows {
			// Six significant digits are more than any benchmark measures.
			num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
			low, high := "", ""
			if row.Time.Bounded() {
				low, high = num(row.Time.Low), num(row.Time.High)
			}
			ratio, p, significant := "", "", ""
			if row.Ratio != 0 {
				ratio, p, significant = num(row.Ratio), num(row.P), strconv.FormatBool(row.Significant)
			}
			_ = cw.Write([]string{
				g.Workload, g.Params, strconv.Itoa(g.GOMAXPROCS), row.Impl, strconv.Itoa(row.Runs),
				num(row.Time.Median), low, high,
				num(row.Bytes), num(row.Allocs), ratio, p, significant, strconv.FormatBool(row.IsBaseline),
			})
		}
	}
	cw.Flush()
	return cw.Error()
}
