package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
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
	// Every table: a header, an alignment row, then rows, all with the
	// header's number of cells.
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
			t.Errorf("table %q has no alignment row or no rows", table[0])
		}
		for _, line := range table[1:] {
			if got := cells(line); got != want {
				t.Errorf("table %q: row %q has %d cells, want %d", table[0], line, got, want)
			}
		}
		table = nil
	}
	sections := make(map[string]bool)
	for line := range strings.Lines(page) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "|") {
			table = append(table, line)
			continue
		}
		check()
		if title, ok := strings.CutPrefix(line, "### "); ok {
			workload, _, _ := strings.Cut(title, " ")
			sections[workload] = true
		}
	}
	check()
	for _, w := range bench.Workloads() {
		if !sections[w] {
			t.Errorf("the page has no section of the workload %s%s", w, regenerate)
		}
	}
	if tables == 0 {
		t.Errorf("the page has no table%s", regenerate)
	}
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
