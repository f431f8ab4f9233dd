package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// readCSV parses text as a reader that knows nothing of comments does
// (pandas' read_csv, a spreadsheet), with csv.Reader's default
// FieldsPerRecord, 0: every record must have as many fields as the first.
// It fails t unless the first record is header, and returns all of them.
func readCSV(t *testing.T, text string, header []string) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = 0
	records, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, text)
	}
	if len(records) == 0 || !slices.Equal(records[0], header) {
		t.Fatalf("the first record is not the header %q:\n%s", header, text)
	}
	if first, _, _ := strings.Cut(text, "\n"); first != strings.Join(header, ",") {
		t.Errorf("the first line is %q, want the header", first)
	}
	return records
}

// A CSV table is the header and the rows, whatever the report holds
// besides: a verdict, settings and notes with commas, quotes and line
// breaks go to the context file, never into the table.
func TestCSVIsATableAlone(t *testing.T) {
	rep := testReport(t, 2) // notes too: too few runs
	rep.Verdict = []string{"Pick \"x\", it is\nfast, 3×.", "# not a comment"}
	rep.Settings = testSettings
	var table, context bytes.Buffer
	if err := rep.WriteCSV(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteCSVContext(&context); err != nil {
		t.Fatal(err)
	}
	records := readCSV(t, table.String(), csvHeader)
	for _, rec := range records[1:] {
		if strings.HasPrefix(rec[0], "#") || rec[0] == csvVerdict || strings.Contains(strings.Join(rec, ","), "Pick") {
			t.Errorf("a table row that is not a result: %q", rec)
		}
	}
	ctx := readCSV(t, context.String(), csvContextHeader)
	if got := ctx[1][2]; got != "Pick \"x\", it is fast, 3×." {
		t.Errorf("the verdict's line break stayed: %q", got)
	}
	if lines := strings.Count(context.String(), "\n"); lines != len(ctx) {
		t.Errorf("%d lines for %d records: a record spans lines", lines, len(ctx))
	}
	var env []string
	for _, rec := range ctx {
		if rec[0] == csvEnvironment {
			env = append(env, rec[1]+"="+rec[2])
		}
	}
	for _, want := range []string{"go=go1.26.0", "cpu=Test CPU <x> & co", "gomaxprocs=2", "baseline=localhost", "confidence=0.9", "grpc-go=v1.85.0", "connect-go="} {
		if !slices.Contains(env, want) {
			t.Errorf("the context's environment %q lacks %q", env, want)
		}
	}
}

func TestCSVContextPath(t *testing.T) {
	for in, want := range map[string]string{
		"table.csv":        "table.context.csv",
		"out/run.1.CSV":    "out/run.1.context.CSV",
		"/tmp/results.csv": "/tmp/results.context.csv",
	} {
		if got := CSVContextPath(in); got != want {
			t.Errorf("CSVContextPath(%q) = %q, want %q", in, got, want)
		}
	}
}
