package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/perf/benchfmt"
)

// asMainEnv, set to 1, makes the test binary run main with its
// arguments, as the built command would, signal handling included.
const asMainEnv = "LOCALGRPC_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Unsetenv(asMainEnv)
		main()
	}
	goleak.VerifyTestMain(m)
}

// runCLI runs the command line args with ctx and returns its exit status,
// stdout and stderr.
func runCLI(ctx context.Context, args ...string) (int, string, string) {
	return runCLIWithInput(ctx, strings.NewReader(""), args...)
}

// runCLIWithInput is runCLI with stdin.
func runCLIWithInput(ctx context.Context, stdin io.Reader, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, stdin, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		// want is in the error. Where cobra, pflag or regexp word it, want
		// is what the user gave, which the error must name; the words
		// around it are theirs.
		want string
	}{
		{[]string{"nosuch"}, `"nosuch"`},
		{[]string{"bench", "--nosuch"}, "--nosuch"},
		{[]string{"bench", "extra"}, `bench takes only flags, no arguments; got "extra"`},
		{[]string{"bench", "extra", "more"}, `bench takes only flags, no arguments; got "extra" "more"`},
		{[]string{"bench", "--count", "0"}, "--count must be at least 1, not 0"},
		{[]string{"bench", "-count", "0"}, "--count must be at least 1, not 0"},
		{[]string{"bench", "-count=many"}, `"many" for "--count"`},
		{[]string{"bench", "--impl", "("}, "--impl: "},
		{[]string{"bench", "--impl", "nosuch"}, `--impl "nosuch" matches no impl; they are localhost, unix`},
		{[]string{"bench", "--workload", "Stream"}, `--workload "Stream" matches no workload; they are ListStrings, Unary, PingPong, FanOut, Batching`},
		{[]string{"bench", "--baseline", "tcp"}, `--baseline "tcp" is not an impl`},
		{[]string{"bench", "--benchtime", "soon"}, `--benchtime "soon" is neither a duration (300ms) nor a count of ops (100x)`},
		{[]string{"bench", "--confidence", "1.5"}, "--confidence must be between 0 and 1, not 1.5"},
		{[]string{"bench", "-c", "0"}, "--callers must be at least 1, not 0"},
		{[]string{"bench", "--strings", "-1"}, "--strings and --size cannot be negative"},
		{[]string{"bench", "--cpu", "0"}, "--cpu: GOMAXPROCS must be at least 1, not 0"},
		{[]string{"bench", "--cpu", "1,two"}, `"1,two" for "--cpu"`},
		{[]string{"bench", "-format", "yaml"}, `--format: unknown format "yaml"; the formats are text, markdown, csv, json, benchfmt`},
		{[]string{"bench", "-o", filepath.Join(dir, "report.pdf")}, `unknown extension ".pdf"`},
		{[]string{"bench", "-o", "-"}, `--output "-": no extension to choose the format by`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), tc.args...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.HasPrefix(stderr, "localgrpc: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not start with the error %q:\n%s", tc.want, stderr)
			}
			// The error stays on screen: one line says where the usage
			// is, and the usage block is not printed.
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Run 'localgrpc") || !strings.HasSuffix(last, " --help' for usage.") {
				t.Errorf("stderr does not end by saying where the usage is:\n%s", stderr)
			}
			if strings.Contains(stderr, "Usage:") || strings.Contains(stderr, "Flags:") {
				t.Errorf("stderr has the whole usage block:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("usage errors left files behind: %v", entries)
	}
}

// An --output file that cannot be created fails before anything runs.
func TestOutputCannotBeCreated(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "missing", "report.html")
	code, stdout, stderr := runCLI(t.Context(), "bench", "--impl", "localhost", "--workload", "Unary", "-o", good, "-o", bad)
	if code != exitFailure || !strings.Contains(stderr, "missing/report.html") {
		t.Errorf("exit status %d, stderr:\n%s", code, stderr)
	}
	if stdout != "" || strings.Contains(stderr, " runs in ") {
		t.Errorf("it ran anyway; stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if _, err := os.Stat(good); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the good output was left behind: %v", err)
	}
}

func TestGoStyleFlags(t *testing.T) {
	root := newRootCmd()
	for _, tc := range []struct{ in, want string }{
		{"bench -count 3 -format=json", "bench --count 3 --format=json"},
		{"bench -c 4 -o x.html -f csv", "bench -c 4 -o x.html -f csv"},         // shorthands
		{"bench --count 3 -quick", "bench --count 3 --quick"},                  // both spellings
		{"bench -cx", "bench -cx"},                                             // not a long flag
		{"bench --impl x -- -count", "bench --impl x -- -count"},               // after --
		{"nosuch -count 3", "nosuch -count 3"},                                 // no such command
		{"bench -impl -count -count 2", "bench --impl --count --count 2"},      // a value that looks like a flag, as cobra sees it
		{"bench -workload=Unary -cpu=1,2", "bench --workload=Unary --cpu=1,2"}, // with =
		{"bench -list", "bench --list"},
	} {
		got := strings.Join(goStyleFlags(root, strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("goStyleFlags(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestList(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "bench", "-list", "-workload", "Unary", "-impl", "inproc-share")
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	want := "BenchmarkUnary/impl=localhost\nBenchmarkUnary/impl=inproc-share-isolated\nBenchmarkUnary/impl=inproc-share-inline\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant (the baseline, localhost, included):\n%s", stdout, want)
	}
}

// TestBench runs the command end to end on a small workload, writing every
// format, and checks that each parses and holds every impl.
func TestBench(t *testing.T) {
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	impls := []string{"localhost", "iter", "inproc-share-isolated"}
	const runs = 2
	args := []string{"bench", "--quick", "--workload", "ListStrings|PingPong", "--impl", "^(iter|inproc-share-isolated)$",
		"--strings", "50", "--benchtime", "3x", "-count", "2", "--untested", "--cpu", "1,2", "-format", "json"}
	for _, name := range []string{"report.html", "charts.svg", "results.txt", "table.csv", "table.md", "report.json"} {
		args = append(args, "-o", out(name))
	}
	code, stdout, stderr := runCLI(t.Context(), args...)
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	// ListStrings has 3 respSizes, PingPong 1; each at 2 GOMAXPROCS.
	groups := (3 + 1) * 2
	cells := groups * len(impls)

	t.Run("progress", func(t *testing.T) {
		total := cells * runs
		// A line per workload of each round: ListStrings has 18 units
		// (3 respSizes, 3 impls, 2 GOMAXPROCS), PingPong 6.
		want := []string{"[18/48] ListStrings round 1: 18 runs in ", "[24/48] PingPong round 1: 6 runs in ",
			"[42/48] ListStrings round 2: 18 runs in ", "[48/48] PingPong round 2: 6 runs in ", "ran 48 of 48 runs in "}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if len(lines) != len(want) {
			t.Fatalf("stderr (of %d runs) has %d lines, want %d:\n%s", total, len(lines), len(want), stderr)
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("line %d: %q, want it to begin %q", i+1, lines[i], w)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		report, err := os.ReadFile(out("report.json"))
		if err != nil {
			t.Fatal(err)
		}
		if string(report) != stdout {
			t.Error("stdout (-format json) differs from report.json")
		}
		var got struct {
			Verdict     []string
			Settings    []struct{ Key, Value string }
			Environment struct {
				GoVersion  string
				GOMAXPROCS []int
				Modules    []struct{ Name, Version string }
			}
			Baseline string
			Groups   []struct {
				Name string
				Rows []struct {
					Impl     string
					Runs     int
					SecPerOp float64
				}
			}
		}
		if err := json.Unmarshal(report, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Verdict) == 0 || !strings.HasPrefix(got.Verdict[0], "This run has no inproc-clone-isolated, so it says nothing of inproc's default; the fastest of the modes it ran (inproc-share-isolated)") {
			t.Errorf("verdict %q", got.Verdict)
		}
		if len(got.Settings) == 0 || got.Settings[0].Key != "quick" || got.Settings[0].Value != "true" {
			t.Errorf("settings %q", got.Settings)
		}
		env := got.Environment
		if env.GoVersion == "" || !slices.Equal(env.GOMAXPROCS, []int{1, 2}) || got.Baseline != "localhost" {
			t.Errorf("environment %+v, baseline %q", env, got.Baseline)
		}
		versions := make(map[string]string)
		for _, m := range env.Modules {
			versions[m.Name] = m.Version
		}
		if !strings.HasPrefix(versions["grpc-go"], "v1.") || !strings.HasPrefix(versions["connect-go"], "v1.") || !strings.HasPrefix(versions["grpchan"], "v1.") {
			t.Errorf("module versions %v", versions)
		}
		if len(got.Groups) != groups {
			t.Fatalf("%d groups, want %d", len(got.Groups), groups)
		}
		for _, g := range got.Groups {
			if len(g.Rows) != len(impls) {
				t.Errorf("%s: %d rows, want %d", g.Name, len(g.Rows), len(impls))
			}
			for _, r := range g.Rows {
				if r.Runs != runs || r.SecPerOp <= 0 {
					t.Errorf("%s/%s: %+v", g.Name, r.Impl, r)
				}
			}
		}
	})
	t.Run("benchfmt", func(t *testing.T) {
		f, err := os.Open(out("results.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := 0
		for r := benchfmt.NewReader(f, "results.txt"); r.Scan(); {
			switch rec := r.Result().(type) {
			case *benchfmt.Result:
				n++
				if rec.Iters != 3 {
					t.Errorf("%s: %d iterations, want 3", rec.Name, rec.Iters)
				}
				for _, key := range []string{"goos", "goarch", "pkg", "go", "grpc-go", "grpchan", "strings"} {
					if rec.GetConfig(key) == "" {
						t.Errorf("%s: no %q configuration", rec.Name, key)
					}
				}
				if got := rec.GetConfig("strings"); got != "50" {
					t.Errorf("strings: %s, want 50", got)
				}
			case *benchfmt.SyntaxError:
				t.Error(rec)
			}
		}
		if n != cells*runs {
			t.Errorf("%d results, want %d", n, cells*runs)
		}
	})
	t.Run("csv", func(t *testing.T) {
		f, err := os.Open(out("table.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// A table alone, as tools that know no comments read it: the
		// header first, every row as wide.
		r := csv.NewReader(f)
		records, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(records) == 0 || records[0][0] != "workload" || records[0][3] != "impl" {
			t.Fatalf("no header: %q", records)
		}
		if len(records) != 1+cells {
			t.Errorf("%d records, want a header and one row per cell, %d", len(records), cells)
		}
		context, err := os.ReadFile(out("table.context.csv"))
		if err != nil {
			t.Fatalf("the verdict and settings beside the table: %v", err)
		}
		if !strings.Contains(string(context), "verdict,") || !strings.Contains(string(context), "setting,") {
			t.Errorf("table.context.csv lacks the verdict or the settings:\n%s", context)
		}
	})
	t.Run("markdown", func(t *testing.T) {
		md, err := os.ReadFile(out("table.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(md), "\n| impl | time/op |"); got != groups {
			t.Errorf("%d tables, want %d:\n%s", got, groups, md)
		}
	})
	for _, name := range []string{"report.html", "charts.svg"} {
		t.Run(name, func(t *testing.T) {
			doc, err := os.ReadFile(out(name))
			if err != nil {
				t.Fatal(err)
			}
			d := xml.NewDecoder(bytes.NewReader(doc))
			d.Strict = true
			charts := 0
			for {
				tok, err := d.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed: %v", err)
				}
				if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
					charts++
				}
			}
			if name == "charts.svg" {
				charts-- // the root
			}
			if charts != 2*groups+1 {
				t.Errorf("%d charts, want the overview and 2 per group, %d", charts, 2*groups+1)
			}
			for _, impl := range impls {
				if got := strings.Count(string(doc), ">"+impl+"<"); got < 2*groups {
					t.Errorf("%s is in %d places, want every chart", impl, got)
				}
			}
		})
	}
}

// TestBenchText checks the default format: a table per group, the fastest
// impl first.
func TestBenchText(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "bench", "--workload", "ListStrings", "--impl", "^(iter|localhost)$",
		"--strings", "50", "--benchtime", "3x", "--count", "2", "--untested")
	if code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	// The verdict comes last, where a terminal leaves it in view.
	if _, verdict, _ := strings.Cut(stdout, "\n\nverdict ("); !strings.HasPrefix(verdict, "ranges over") ||
		!strings.Contains(verdict, "\n  in one process: no inproc impl in this run\n") || strings.Contains(verdict, "GOMAXPROCS") {
		t.Errorf("the report does not end with a verdict on what it ran:\n%s", stdout)
	}
	for _, want := range []string{"settings: quick false, strings 50, size 100 B a string, 5 B an Echo text, benchtime 3x, count 2, callers 1, cpu ",
		"baseline localhost, workload ListStrings, impl ^(iter|localhost)$, untested true\n",
		"environment: go", "ListStrings respSize=1 (GOMAXPROCS", "ListStrings respSize=100 (GOMAXPROCS", "vs localhost", "base"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	for _, table := range strings.Split(stdout, "\n\n") {
		if !strings.HasPrefix(table, "ListStrings") {
			continue // the environment, or notes
		}
		if i, l := strings.Index(table, "\n  iter "), strings.Index(table, "\n  localhost "); i < 0 || i > l {
			t.Errorf("iter is not listed before localhost:\n%s", table)
		}
	}
}

// cancelOnWrite is a writer that cancels a context once what was written
// to it contains a string.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	after  string
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.after) {
		c.cancel()
	}
	return len(p), nil
}

// An interrupted run reports the runs that finished and fails.
func TestBenchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The first round's line is written as the second round's first run
	// starts: that run ends, and the next is not made.
	stderr := &cancelOnWrite{after: "[5/", cancel: cancel}
	out := filepath.Join(t.TempDir(), "results.txt")
	var stdout bytes.Buffer
	code := run(ctx, []string{"bench", "--workload", "Unary", "--impl", "^inproc-", "--benchtime", "3x", "-o", out}, nil, &stdout, stderr)
	if code != exitFailure {
		t.Errorf("exit status %d, want %d", code, exitFailure)
	}
	total := 5 * 5 // localhost and 4 inproc modes, 5 runs each
	if want := "interrupted after 6 of 25 runs"; !strings.Contains(stderr.buf.String(), want) {
		t.Errorf("stderr lacks %q (of %d runs):\n%s", want, total, &stderr.buf)
	}
	results, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(results), "\nBenchmarkUnary/"); n != 6 {
		t.Errorf("%d results saved, want 6:\n%s", n, results)
	}
	if !strings.Contains(stdout.String(), "Unary (GOMAXPROCS") {
		t.Errorf("no report of the runs that finished:\n%s", &stdout)
	}
}
