package main

import (
	"context"
	"encoding/csv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wantPairings are the rows of measure's matrix, in order: every client
// that can call each server, on every kind of address it serves.
var wantPairings = []string{
	"| grpc | grpc | inproc |",
	"| grpc | grpc | abstract |",
	"| grpc | connect-grpc | abstract |",
	"| connect | grpc | abstract |",
	"| connect | connect | abstract |",
	"| connect | connect-grpc | abstract |",
	"| connect | connect-grpc-web | abstract |",
	"| grpc | grpc | unix |",
	"| grpc | connect-grpc | unix |",
	"| connect | grpc | unix |",
	"| connect | connect | unix |",
	"| connect | connect-grpc | unix |",
	"| connect | connect-grpc-web | unix |",
	"| grpc | grpc | tcp |",
	"| grpc | connect-grpc | tcp |",
	"| connect | grpc | tcp |",
	"| connect | connect | tcp |",
	"| connect | connect-grpc | tcp |",
	"| connect | connect-grpc-web | tcp |",
}

// timeCell is a table cell holding a time.
var timeCell = regexp.MustCompile(`^ [0-9.]+(ns|µs|ms|s) $`)

func TestMeasureMarkdown(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "measure", "-n", "3", "--warmup", "1", "-m", "a b")
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "\nran 76 of 76 runs in ") {
		t.Errorf("stderr does not end with the progress's summary:\n%s", stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.HasPrefix(lines[0], "Environment: go") || !strings.Contains(lines[0], "grpc-go v") || !strings.Contains(lines[0], "connect-go v") {
		t.Errorf("environment line: %s", lines[0])
	}
	if want := `3 calls of each method, one at a time, after 1 warm-up calls; get and expand send one request of "a b", collect and update 3; compression off.`; lines[2] != want {
		t.Errorf("conditions line:\n%s\nwant:\n%s", lines[2], want)
	}
	for _, title := range []string{"### Mean time per call", "### p99 time per call"} {
		i := slices.Index(lines, title)
		if i < 0 {
			t.Fatalf("no %q:\n%s", title, stdout)
		}
		if lines[i+2] != "| server | client | address | get | expand | collect | update |" || lines[i+3] != "|---|---|---|--:|--:|--:|--:|" {
			t.Errorf("%s: header %q %q", title, lines[i+2], lines[i+3])
		}
		rows := lines[i+4 : i+4+len(wantPairings)]
		for j, row := range rows {
			if !strings.HasPrefix(row, wantPairings[j]) {
				t.Errorf("%s: row %d is %q, want it to start %q", title, j+1, row, wantPairings[j])
				continue
			}
			cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row, wantPairings[j]), "|"), "|")
			if len(cells) != 4 {
				t.Errorf("%s: row %q has %d method cells", title, row, len(cells))
			}
			for _, c := range cells {
				if !timeCell.MatchString(c) {
					t.Errorf("%s: row %q has the cell %q, not a time", title, row, c)
				}
			}
		}
		if next := lines[i+4+len(wantPairings)]; next != "" {
			t.Errorf("%s: a row too many: %q", title, next)
		}
	}
}

func TestMeasureCSV(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "measure", "-n", "2", "--warmup", "0", "--count", "2", "--format", "csv")
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"server", "client", "address", "method", "calls", "errors", "error_codes",
		"mean_sec", "p50_sec", "p90_sec", "p99_sec", "max_sec", "calls_per_sec",
		"concurrency", "requests_per_stream", "compression", "go", "goos", "goarch", "cpu", "numcpu", "gomaxprocs",
		"localgrpc", "grpc-go", "connect-go", "grpchan", "protobuf-go"}
	if !slices.Equal(records[0], header) {
		t.Fatalf("header %q\nwant %q", records[0], header)
	}
	if len(records) != 1+len(wantPairings)*len(methods) {
		t.Fatalf("%d rows, want %d", len(records)-1, len(wantPairings)*len(methods))
	}
	for i, r := range records[1:] {
		pairing := "| " + strings.Join(r[0:3], " | ") + " |"
		if want := wantPairings[i/len(methods)]; pairing != want || r[3] != string(methods[i%len(methods)]) {
			t.Errorf("row %d is %s %s, want %s %s", i+1, pairing, r[3], want, methods[i%len(methods)])
		}
		if r[4] != "2" || r[5] != "0" || r[6] != "" || r[13] != "1" || r[14] != "2" || r[15] != "false" {
			t.Errorf("row %d: calls, errors, codes, concurrency, count, compression: %q", i+1, r[4:16])
		}
		for _, v := range r[7:13] {
			if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
				t.Errorf("row %d: a statistic is %q", i+1, v)
			}
		}
		if r[16] == "" || r[23] == "" || r[24] == "" {
			t.Errorf("row %d: the environment is missing: %q", i+1, r[16:])
		}
	}
}

// TestMeasureInterrupted ends measure before any call: it says so, shows
// nothing as measured, and fails.
func TestMeasureInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, stdout, stderr := runCLI(ctx, "measure", "-n", "2")
	if code != exitFailure || !strings.HasSuffix(stderr, "localgrpc: interrupted: the tables hold what was measured before\n") {
		t.Errorf("exit status %d, stderr:\n%s", code, stderr)
	}
	if got := strings.Count(stdout, "| not run | not run | not run | not run |"); got != 2*len(wantPairings) {
		t.Errorf("%d rows not run, want %d:\n%s", got, 2*len(wantPairings), stdout)
	}
}

func TestMeasureUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n 0: it must be at least 1"},
		{[]string{"-c", "0"}, "-c 0: it must be at least 1"},
		{[]string{"-n", "2", "-c", "3"}, "-c 3 is more calls at a time than -n 2 calls"},
		{[]string{"--warmup", "-1"}, "--warmup -1: it must be 0 or more"},
		{[]string{"--count", "0"}, "--count 0: it must be at least 1"},
		{[]string{"-m", "\xff"}, `-m "\xff": the text is not valid UTF-8, as a protobuf string must be`},
		{[]string{"-m", "ok \xed\xa0\x80"}, `-m "ok \xed\xa0\x80": the text is not valid UTF-8, as a protobuf string must be`},
		{[]string{"--timeout", "0s"}, "--timeout 0s: it must be more than 0"},
		{[]string{"--format", "yaml"}, `--format "yaml": the formats are markdown and csv`},
		{[]string{"extra"}, `measure takes only flags, no arguments; got "extra"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), append([]string{"measure"}, tc.args...)...)
			if code != exitUsage || !strings.HasPrefix(stderr, "localgrpc: "+tc.want+"\n") || stdout != "" {
				t.Errorf("exit status %d, stdout %q, stderr:\n%s\nwant %d and %q", code, stdout, stderr, exitUsage, tc.want)
			}
		})
	}
}
