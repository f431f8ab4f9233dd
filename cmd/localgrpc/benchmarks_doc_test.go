package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/matrix"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// benchmarksPage is the committed page of a full run, from this
// package's directory, and the command that writes it, from the
// repository root.
const (
	benchmarksPage    = "../../docs/benchmarks.md"
	benchmarksCommand = "go run ./cmd/localgrpc bench --count 6 -o docs/benchmarks.md"
)

// The committed docs/benchmarks.md is a page bench writes, and says what
// this code would: its method section is the one the code renders today,
// its tables are well formed, and every workload of the suite has its
// section. Regenerating it is the fix for any failure here.
func TestBenchmarksPage(t *testing.T) {
	page, err := os.ReadFile(filepath.FromSlash(benchmarksPage))
	if err != nil {
		t.Fatalf("docs/benchmarks.md: %v; generate it from the repository root with\n\t%s", err, benchmarksCommand)
	}
	checkBenchPage(t, string(page))
}

// checkBenchPage fails t unless page is a whole, well-formed page of a
// bench run of every workload.
func checkBenchPage(t *testing.T, page string) {
	t.Helper()
	regenerate := "; regenerate it from the repository root with\n\t" + benchmarksCommand
	if !strings.HasPrefix(page, "# localgrpc bench\n\nMade by localgrpc bench ") {
		t.Errorf("the page does not open with its title and how it was made%s", regenerate)
	}
	if !strings.Contains(page, "\n## Verdict\n\n- ") {
		t.Errorf("the page has no verdict%s", regenerate)
	}
	if !strings.Contains(page, "\n"+report.MethodSection()+"\n\n## Results\n") {
		t.Errorf("the page's method is not the one the code renders today%s", regenerate)
	}
	sections := make(map[string]bool)
	for line := range strings.Lines(page) {
		if title, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "### "); ok {
			workload, _, _ := strings.Cut(title, " ")
			sections[workload] = true
		}
	}
	if checkMarkdownTables(t, page, regenerate) == 0 {
		t.Errorf("the page has no table%s", regenerate)
	}
	for _, w := range bench.Workloads() {
		if !sections[w] {
			t.Errorf("the page has no section of the workload %s%s", w, regenerate)
		}
	}
}

// checkMarkdownTables fails t for each table of page that is not well
// formed, saying what to do (hint), and returns how many tables it has.
// A table is a header, an alignment row, then rows, all with the
// header's number of cells.
func checkMarkdownTables(t *testing.T, page, hint string) int {
	t.Helper()
	var table []string
	tables := 0
	check := func() {
		if len(table) == 0 {
			return
		}
		tables++
		cells := func(line string) int { return strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") - 1 }
		want := cells(table[0])
		if len(table) < 3 || strings.Trim(table[1], "|-: ") != "" {
			t.Errorf("table %q has no alignment row or no rows%s", table[0], hint)
		}
		for _, line := range table[1:] {
			if got := cells(line); got != want {
				t.Errorf("table %q: row %q has %d cells, want %d%s", table[0], line, got, want, hint)
			}
		}
		table = nil
	}
	for line := range strings.Lines(page) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "|") {
			table = append(table, line)
			continue
		}
		check()
	}
	check()
	return tables
}

// A page bench writes now passes the checks of the committed one, so
// that a failure of TestBenchmarksPage means the page is stale, not that
// bench writes a page the test cannot read.
func TestBenchPageWellFormed(t *testing.T) {
	md := filepath.Join(t.TempDir(), "page.md")
	code, _, stderr := runCLI(t.Context(), "bench", "--impl", "^(localhost|inproc-clone-isolated)$",
		"--strings", "20", "--benchtime", "2x", "--count", "2", "--untested", "-o", md)
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	page, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	checkBenchPage(t, string(page))
}

// measurePage is the committed page of a run of measure, from this
// package's directory, and the command that writes it, from the
// repository root.
const (
	measurePage    = "../../docs/measure.md"
	measureCommand = "go run ./cmd/localgrpc measure -o docs/measure.md"
)

// The committed docs/measure.md is a page measure writes: how it was
// made, what measure measures as the code says it today, and both
// tables, well formed, with a row per pairing and a column per method.
func TestMeasurePage(t *testing.T) {
	page, err := os.ReadFile(filepath.FromSlash(measurePage))
	if err != nil {
		t.Fatalf("docs/measure.md: %v; generate it from the repository root with\n\t%s", err, measureCommand)
	}
	checkMeasurePage(t, string(page), "; regenerate it from the repository root with\n\t"+measureCommand)
}

// checkMeasurePage fails t unless page is a whole, well-formed page of a
// measure run of every pairing.
func checkMeasurePage(t *testing.T, page, hint string) {
	t.Helper()
	if !strings.HasPrefix(page, matrix.PageTitle+"Made by localgrpc measure") {
		t.Errorf("the page does not open with its title and how it was made%s", hint)
	}
	if !strings.Contains(page, "\n\n"+report.EscapeMarkdown(matrix.About)+"\n\n") {
		t.Errorf("the page does not say what measure measures as the code does today%s", hint)
	}
	for _, title := range []string{"\n### Mean time per call\n", "\n### p99 time per call\n"} {
		if !strings.Contains(page, title) {
			t.Errorf("the page has no table %q%s", strings.TrimSpace(title), hint)
		}
	}
	header := "| server | client | address | server process |"
	for _, m := range echoclient.Methods {
		header += " " + string(m) + " |"
	}
	if strings.Count(page, header+"\n") != 2 {
		t.Errorf("the page's tables do not both have the header %q%s", header, hint)
	}
	if n := checkMarkdownTables(t, page, hint); n != 2 {
		t.Errorf("the page has %d tables, want 2%s", n, hint)
	}
	rows := 0
	for line := range strings.Lines(page) {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| server |") {
			rows++
		}
	}
	if want := 2 * len(matrix.Pairings(allServed())); rows != want {
		t.Errorf("the page has %d rows, want %d: one per pairing in each table%s", rows, want, hint)
	}
}

// allServed is every stack served on every kind of address, as measure
// serves them, for counting the pairings.
func allServed() map[string]map[string]matrix.ServedAt {
	addrs := make(map[string]map[string]matrix.ServedAt)
	for _, stack := range []string{stackGRPC, stackConnect} {
		addrs[stack] = make(map[string]matrix.ServedAt)
		for _, kind := range matrix.Kinds {
			if kind == "shm" && stack != stackGRPC {
				continue
			}
			addrs[stack][kind] = matrix.ServedAt{}
		}
	}
	return addrs
}

// A page measure writes now passes the checks of the committed one.
func TestMeasurePageWellFormed(t *testing.T) {
	md := filepath.Join(t.TempDir(), "measure.md")
	code, _, stderr := runCLI(t.Context(), "measure", "-n", "2", "--warmup", "0", "-o", md)
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	page, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	checkMeasurePage(t, string(page), "")
}
