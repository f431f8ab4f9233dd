package report

import (
	"encoding/csv"
	"io"
	"path/filepath"
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

// WriteCSV writes the report's table as CSV and nothing else: a header,
// then one row per impl of each group, every row with the header's
// number of fields, so that any CSV reader takes it as it is (pandas'
// read_csv, R's read.csv, a spreadsheet, Go's csv.Reader). The verdict,
// the settings, the environment and the notes are not in it: they are
// WriteCSVContext's, a file of their own beside it.
//
// An interval bound is empty when there were too few runs for it; ratio, p
// and significant are empty in a group without the baseline; noisy is
// true where the row's interval overlaps the baseline's or a neighbouring
// row's, as [Row.Noisy] says.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
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
				strconv.FormatBool(row.Noisy), orEmpty(row.P50), orEmpty(row.P99),
			})
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvContextHeader names the columns of WriteCSVContext.
var csvContextHeader = []string{"kind", "key", "value"}

// The kinds of WriteCSVContext's records.
const (
	csvVerdict     = "verdict"
	csvFloorGap    = "floor-gap"
	csvSetting     = "setting"
	csvEnvironment = "environment"
	csvNote        = "note"
	csvNoise       = "noise"
)

// WriteCSVContext writes what WriteCSV's table leaves out, as a CSV file
// of its own to keep beside it (CSVContextPath names it): a header
// "kind,key,value", then a record per paragraph of the verdict (kind
// "verdict", key its number from 1), per paragraph of the floor gap
// ("floor-gap", its number), per setting ("setting", the
// setting's key and value), per fact of the environment ("environment":
// go, goos, goarch, cpu, numcpu, gomaxprocs, baseline, confidence and
// each module's version), for the share of noisy rows ("noise", key
// "rows") and per note ("note", its number). Every record
// has three fields and no line break inside one.
func (r *Report) WriteCSVContext(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvContextHeader)
	record := func(kind, key, value string) {
		// One line per record: a line break inside a quoted field is
		// valid CSV, but line-oriented tools (grep, head) would split it.
		_ = cw.Write([]string{kind, key, strings.Join(strings.Fields(value), " ")})
	}
	for i, v := range r.Verdict {
		record(csvVerdict, strconv.Itoa(i+1), v)
	}
	for i, v := range r.FloorGap {
		record(csvFloorGap, strconv.Itoa(i+1), v)
	}
	for _, s := range r.Settings {
		record(csvSetting, s.Key, s.Value)
	}
	e := r.Environment
	gomaxprocs := make([]string, len(e.GOMAXPROCS))
	for i, p := range e.GOMAXPROCS {
		gomaxprocs[i] = strconv.Itoa(p)
	}
	for _, kv := range [][2]string{
		{"go", e.GoVersion}, {"goos", e.GOOS}, {"goarch", e.GOARCH}, {"cpu", e.CPU},
		{"numcpu", strconv.Itoa(e.NumCPU)}, {"gomaxprocs", strings.Join(gomaxprocs, ",")},
		{"baseline", r.Baseline}, {"confidence", strconv.FormatFloat(r.Confidence, 'g', -1, 64)},
	} {
		record(csvEnvironment, kv[0], kv[1])
	}
	for _, m := range e.Modules {
		record(csvEnvironment, m.Name, m.Version)
	}
	if n := r.NoiseLine(); n != "" {
		record(csvNoise, "rows", n)
	}
	for i, n := range r.Notes {
		record(csvNote, strconv.Itoa(i+1), n)
	}
	cw.Flush()
	return cw.Error()
}

// CSVContextPath is the name of the file WriteCSVContext's output goes to
// beside a table written to path: "out/table.csv" gives
// "out/table.context.csv".
func CSVContextPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".context" + ext
}
