package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
)

// wantPairings are the rows of measure's matrix, in order: every client
// that can call each server, on every kind of address it serves.
var wantPairings = []string{
	"| grpc | grpc | inproc |",
	"| connect | connect | inproc |",
	"| connect | connect-grpc | inproc |",
	"| connect | connect-grpc-web | inproc |",
	"| grpc | grpc | shm |",
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

// wantProcess is the server process measure says each row of
// wantPairings ran in: "same" for all, or with --server-process "child"
// for all but inproc.
func wantProcess(pairing string, serverProcess bool) string {
	if serverProcess && !strings.HasSuffix(pairing, "| inproc |") {
		return "child"
	}
	return "same"
}

func TestMeasureMarkdown(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "measure", "-n", "3", "--warmup", "1", "-m", "a b")
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	checkMeasureMarkdown(t, stdout, stderr, false)
}

// checkMeasureMarkdown checks measure's markdown tables, of a run with -n 3
// --warmup 1 -m "a b", and with --server-process if serverProcess.
func checkMeasureMarkdown(t *testing.T, stdout, stderr string, serverProcess bool) {
	t.Helper()
	if !strings.Contains(stderr, "\nran 92 of 92 runs in ") {
		t.Errorf("stderr does not end with the progress's summary:\n%s", stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.HasPrefix(lines[0], "Environment: go") || !strings.Contains(lines[0], "grpc-go v") || !strings.Contains(lines[0], "connect-go v") {
		t.Errorf("environment line: %s", lines[0])
	}
	if want := `3 calls of each method, one at a time, after 1 warm-up calls; get and expand send one request of "a b", collect and update 3; compression off.`; !strings.HasPrefix(lines[2], want) {
		t.Errorf("conditions line:\n%s\nwant it to begin:\n%s", lines[2], want)
	}
	// What is timed, and why bench's figures differ.
	if !strings.Contains(lines[2], "Each call is timed alone") || !strings.Contains(lines[2], "bench's time/op") || strings.Contains(lines[2], "partial") {
		t.Errorf("conditions line does not say what is timed, or says a whole run is partial:\n%s", lines[2])
	}
	wantProcesses := fmt.Sprintf("Servers and clients ran in one process (pid %d), sharing its scheduler and heap (server process: same); --server-process runs the servers on sockets in processes of their own.", os.Getpid())
	if serverProcess {
		wantProcesses = "The servers on sockets ran in child processes (server process: child; grpc in pid "
	}
	if !strings.HasPrefix(lines[4], wantProcesses) {
		t.Errorf("processes line:\n%s\nwant it to start:\n%s", lines[4], wantProcesses)
	}
	for _, title := range []string{"### Mean time per call", "### p99 time per call"} {
		i := slices.Index(lines, title)
		if i < 0 {
			t.Fatalf("no %q:\n%s", title, stdout)
		}
		if lines[i+2] != "| server | client | address | server process | get | expand | collect | update |" || lines[i+3] != "|---|---|---|---|--:|--:|--:|--:|" {
			t.Errorf("%s: header %q %q", title, lines[i+2], lines[i+3])
		}
		rows := lines[i+4 : i+4+len(wantPairings)]
		for j, row := range rows {
			want := wantPairings[j] + " " + wantProcess(wantPairings[j], serverProcess) + " |"
			if !strings.HasPrefix(row, want) {
				t.Errorf("%s: row %d is %q, want it to start %q", title, j+1, row, want)
				continue
			}
			cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row, want), "|"), "|")
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
	header := []string{"server", "client", "address", "server_process", "server_pid", "method", "calls", "errors", "error_codes",
		"mean_sec", "p50_sec", "p90_sec", "p99_sec", "max_sec", "calls_per_sec",
		"concurrency", "requests_per_stream", "compression", "go", "goos", "goarch", "cpu", "numcpu", "gomaxprocs",
		"localgrpc", "grpc-go", "connect-go", "grpchan", "protobuf-go"}
	if !slices.Equal(records[0], header) {
		t.Fatalf("header %q\nwant %q", records[0], header)
	}
	checkMeasureCSV(t, records, false)
}

// checkMeasureCSV checks the rows of measure's CSV, of a run with -n 2
// --count 2, and with --server-process if serverProcess.
func checkMeasureCSV(t *testing.T, records [][]string, serverProcess bool) {
	t.Helper()
	if len(records) != 1+len(wantPairings)*len(echoclient.Methods) {
		t.Fatalf("%d rows, want %d", len(records)-1, len(wantPairings)*len(echoclient.Methods))
	}
	for i, r := range records[1:] {
		pairing := "| " + strings.Join(r[0:3], " | ") + " |"
		want := wantPairings[i/len(echoclient.Methods)]
		if pairing != want || r[5] != string(echoclient.Methods[i%len(echoclient.Methods)]) {
			t.Errorf("row %d is %s %s, want %s %s", i+1, pairing, r[5], want, echoclient.Methods[i%len(echoclient.Methods)])
		}
		if r[3] != wantProcess(want, serverProcess) {
			t.Errorf("row %d (%s): server process %q, want %q", i+1, pairing, r[3], wantProcess(want, serverProcess))
		}
		pid, err := strconv.Atoi(r[4])
		if err != nil || pid <= 0 || (pid == os.Getpid()) != (r[3] == "same") {
			t.Errorf("row %d (%s): server pid %q, this process's %d, server process %q", i+1, pairing, r[4], os.Getpid(), r[3])
		}
		if r[6] != "2" || r[7] != "0" || r[8] != "" || r[15] != "1" || r[16] != "2" || r[17] != "false" {
			t.Errorf("row %d: calls, errors, codes, concurrency, count, compression: %q", i+1, r[6:18])
		}
		for _, v := range r[9:15] {
			if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
				t.Errorf("row %d: a statistic is %q", i+1, v)
			}
		}
		if r[18] == "" || r[25] == "" || r[26] == "" {
			t.Errorf("row %d: the environment is missing: %q", i+1, r[18:])
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
	if got := strings.Count(stdout, " | not run | not run | not run | not run |"); got != 2*len(wantPairings) {
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
		{[]string{"-o", "m.txt"}, `--output "m.txt": use .md (a page) or .csv`},
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
