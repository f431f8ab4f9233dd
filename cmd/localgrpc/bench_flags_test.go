package main

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Flags that mean nothing are refused, not replaced by defaults: a given
// --strings 0 or --size 0, and a GOMAXPROCS beyond the bound.
func TestBenchFlagsThatMeanNothing(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--strings", "0"}, "--strings"},
		{[]string{"--strings=0", "--quick"}, "--strings"},
		{[]string{"--size", "0"}, "--size"},
		{[]string{"--cpu", "1000000"}, "--cpu"},
		{[]string{"--cpu", "1," + strconv.Itoa(maxProcsPerCPU*runtime.NumCPU()+1)}, "--cpu"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), append([]string{"bench", "--workload", "Unary"}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.HasPrefix(stderr, "localgrpc: "+tc.flag) {
				t.Errorf("stderr does not start by naming %s:\n%s", tc.flag, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %s", stdout)
			}
		})
	}
	// The bound itself, and the defaults left out, are fine.
	most := strconv.Itoa(maxProcsPerCPU * runtime.NumCPU())
	if code, _, stderr := runCLI(t.Context(), "bench", "--list", "--cpu", most, "--strings", "1", "--size", "1"); code != exitOK {
		t.Errorf("--cpu %s --strings 1 --size 1: exit status %d; stderr:\n%s", most, code, stderr)
	}
}

// The line saying how a report was made gives the command as a shell
// would take it again: the flags given, values quoted where needed.
func TestBenchCommandLine(t *testing.T) {
	cmd := newBenchCmd()
	if err := cmd.ParseFlags([]string{"--quick", "--impl", "^(unix|localhost)$", "-o", "a.md", "-o", "b.html", "--cpu", "1,2"}); err != nil {
		t.Fatal(err)
	}
	got := commandLine(cmd)
	for _, want := range []string{"bench --quick", "--impl '^(unix|localhost)$'", "--output a.md --output b.html", "--cpu 1 --cpu 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("command line %q lacks %q", got, want)
		}
	}
}
