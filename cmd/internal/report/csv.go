package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
)

// csvHeader names the columns of WriteCSV. Times are in seconds, so that
// a spreadsheet can compute with them; empty cells mean "none".
var csvHeader = []string{
	"workload", "params", "gomaxprocs", "impl", "runs",
	"sec_per_op", "sec_per_op_low", "sec_per_op_high",
	"bytes_per_op", "allocs_per_op", "ratio", "p", "significant", "baseline", "noisy",
	"p50_sec_per_call", "p99_sec_per_call",
}

// The first cells of WriteCSV's comment records.
const (
	csvVerdict = "# verdict"
	csvSetting = "# setting"
	csvNote    = "# note"
)

// WriteCSV writes the report as CSV: comment records, then a header, then
// one row per impl of each group.
//
// The comment records carry what is not a table: a "# verdict" record per
// paragraph of the verdict (its text in the second cell), a "# setting"
// record per setting (key and value in the second and third cells) and a
// "# note" record per note. Every record has the header's number of
// cells, so a reader that knows nothing of comments still parses the file
// (Go's csv.Reader by default, a spreadsheet); one told that "#" starts a
// comment line skips them and gets the table alone (csv.Reader's Comment
// '#', pandas' comment='#', R's comment.char='#').
//
// An interval bound is empty when there were too few runs for it; ratio, p
// and significant are empty in a group without the baseline; noisy is
// true where the interval is wider than ±25% of the median or unbounded.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	comment := func(cells ...string) {
		rec := make([]string, len(csvHeader))
		for i, c := range cells {
			// A line break would end the comment line inside a quoted cell.
			rec[i] = strings.Join(strings.Fields(c), " ")
		}
		_ = cw.Write(rec)
	}
	for _, v := range r.Verdict {
		comment(csvVerdict, v)
	}
	for _, s := range r.Settings {
		comment(csvSetting, s.Key, s.Value)
	}
	for _, n := range r.Notes {
		comment(csvNote, n)
	}
	_ = cw.Write(csvHeader)
	for _, g := range r.Groups {
		for _, row := range g.Rows {
			// Six significant digits are more than any benchmark measures.
			num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
			orEmpty := func(v float64) string {
				if v == 0 {
					return ""
				}
				return num(v)
			}
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
				strconv.FormatBool(row.Noisy()), orEmpty(row.P50), orEmpty(row.P99),
			})
		}
	}
	cw.Flush()
	return cw.Error()
}
