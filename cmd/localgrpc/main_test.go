package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/perf/benchfmt"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"nosuch"},
		{"bench", "--nosuch"},
		{"bench", "extra"},
		{"bench", "--count", "0"},
		{"bench", "--count", "many"},
		{"bench", "--impl", "("},
		{"bench", "--impl", "nosuch"},
		{"bench", "--benchtime", "soon"},
		{"bench", "--confidence", "1.5"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(args, &stdout, &stderr); got != exitUsage {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, exitUsage, &stderr)
			}
			if !strings.Contains(stderr.String(), "Usage:") {
				t.Errorf("stderr has no usage:\n%s", &stderr)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", &stdout)
			}
		})
	}
}

func TestBench(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.txt")
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "--impl", "^(localhost|iter)$", "--strings", "50", "--benchtime", "3x", "--count", "2", "-o", out}
	if got := run(args, &stdout, &stderr); got != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", got, &stderr)
	}

	// The results file is in the Go benchmark format: 2 impls × 3
	// respSizes × 2 runs.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for r := benchfmt.NewReader(f, out); r.Scan(); {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			if rec.Iters != 3 {
				t.Errorf("%s: %d iterations, want 3", rec.Name, rec.Iters)
			}
			n++
		case *benchfmt.SyntaxError:
			t.Error(rec)
		}
	}
	if n != 12 {
		t.Errorf("%d results, want 12", n)
	}

	// stdout is the table alone; the fastest impl comes first.
	table := stdout.String()
	for _, want := range []string{"ListStrings/respSize=1", "ListStrings/respSize=100", "vs localhost", "base"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Index(table, "  iter ") > strings.Index(table, "  localhost ") {
		t.Errorf("iter is not listed before localhost:\n%s", table)
	}
	if !strings.Contains(stderr.String(), "[12/12]") {
		t.Errorf("stderr lacks the last progress line:\n%s", &stderr)
	}
}
