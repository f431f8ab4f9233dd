package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/report"
)

// A --count too small for the statistics at --confidence is refused before
// anything runs, naming both flags, unless --untested.
func TestBenchTooFewRuns(t *testing.T) {
	for _, args := range [][]string{
		{"--count", "3"},
		{"--confidence", "0.95"}, // the default --count, 5, is too few for it
		{"--confidence", "0.99", "--count", "6"},
		{"-count", "1", "--quick"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), append([]string{"bench", "--workload", "Unary"}, args...)...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			for _, flag := range []string{"--count", "--confidence", "--untested"} {
				if !strings.Contains(stderr, flag) {
					t.Errorf("stderr does not name %s:\n%s", flag, stderr)
				}
			}
			if stdout != "" || strings.Contains(stderr, " runs in ") {
				t.Errorf("it ran; stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
	for _, args := range [][]string{
		{"--count", "3", "--untested"},
		{"--confidence", "0.95", "--count", "6"},
		{"--confidence", "0.8", "--count", "4"},
	} {
		code, _, stderr := runCLI(t.Context(), append([]string{"bench", "--list"}, args...)...)
		if code != exitOK {
			t.Errorf("%s: exit status %d, want %d; stderr:\n%s", strings.Join(args, " "), code, exitOK, stderr)
		}
	}
}

// A run of 3 runs (--untested) cannot tell its impls apart, and its verdict
// says so rather than "no significant difference", with the medians'
// ratios marked untested.
func TestBenchUntested(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "bench", "--workload", "Unary", "--impl", "^inproc-clone-isolated$",
		"--benchtime", "3x", "--count", "3", "--untested")
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	_, verdict, _ := strings.Cut(stdout, "\nverdict (")
	for _, want := range []string{"cannot tell with 3 runs", "untested", "× "} {
		if !strings.Contains(verdict, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, verdict)
		}
	}
	if strings.Contains(verdict, "no significant difference") {
		t.Errorf("the verdict claims what 3 runs cannot test:\n%s", verdict)
	}
}

// Every example of bench's help passes bench's checks as it stands (run
// with --list, so that nothing runs), and the one that feeds benchstat,
// whose intervals are at 0.95, gives it runs enough for them.
func TestBenchHelpExamples(t *testing.T) {
	examples := newBenchCmd().Example
	for line := range strings.Lines(examples) {
		cmdline, _, _ := strings.Cut(line, "#")
		cmdline, _, _ = strings.Cut(cmdline, ">")
		fields := strings.Fields(cmdline)
		if len(fields) < 2 || fields[0] != "localgrpc" {
			t.Fatalf("example %q is not a localgrpc command", line)
		}
		args := make([]string, 0, len(fields))
		for _, a := range fields[1:] {
			args = append(args, strings.Trim(a, "'"))
		}
		code, _, stderr := runCLI(t.Context(), append(args, "--list")...)
		if code != exitOK {
			t.Errorf("example %q: exit status %d; stderr:\n%s", strings.TrimSpace(line), code, stderr)
		}
		if strings.Contains(line, "benchstat") {
			count := 5 // bench's default
			for i, a := range args {
				if (a == "--count" || a == "-count") && i+1 < len(args) {
					count, _ = strconv.Atoi(args[i+1])
				}
			}
			if need := report.IntervalRuns(0.95); count < need {
				t.Errorf("example %q gives benchstat %d runs; its 0.95 intervals need %d", strings.TrimSpace(line), count, need)
			}
		}
	}
}

// What is left to gain against the floor is for maintainers: the text
// verdict says it only with --floor-gap, and a markdown file always.
func TestBenchFloorGap(t *testing.T) {
	md := filepath.Join(t.TempDir(), "report.md")
	args := []string{"bench", "--workload", "Unary", "--impl", "^(inproc-clone-isolated|floor)$",
		"--benchtime", "3x", "--count", "2", "--untested"}
	code, stdout, stderr := runCLI(t.Context(), append(args, "-o", md)...)
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	if strings.Contains(stdout, "left to gain") {
		t.Errorf("the default text has the floor gap:\n%s", stdout)
	}
	if page, err := os.ReadFile(md); err != nil || !strings.Contains(string(page), "What is left to gain") {
		t.Errorf("the markdown file lacks the floor gap (%v):\n%s", err, page)
	}
	code, stdout, stderr = runCLI(t.Context(), append(args, "--floor-gap")...)
	if code != exitOK {
		t.Fatalf("--floor-gap: exit status %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "left to gain against the floors:\n  - What is left to gain: inproc-clone-isolated") {
		t.Errorf("--floor-gap: the text lacks the floor gap:\n%s", stdout)
	}
}
