package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
)

// A run that cannot fit in the memory available is refused before it
// starts, naming the flags and the figures.
func TestBenchMemoryRefused(t *testing.T) {
	if _, err := memAvailable(); err != nil {
		t.Skipf("no MemAvailable here (%v): the check is skipped", err)
	}
	// About 2 EiB: no machine has it.
	code, stdout, stderr := runCLI(t.Context(), "bench", "--workload", "ListStrings", "--strings", "1000000000000", "--size", "1000000")
	if code != exitUsage {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{"--strings", "--size", "EiB", "available"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if stdout != "" || strings.Contains(stderr, " runs in ") {
		t.Errorf("it ran; stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

// The estimate grows with --strings × --size where the workload keeps the
// strings, and not where it does not.
func TestMemoryEstimate(t *testing.T) {
	cfg := bench.Config{Strings: 100_000_000, StringSize: 100}
	list := bench.Cases(cfg)
	var unary []bench.Case
	for _, c := range list {
		if c.Workload == bench.Unary {
			unary = append(unary, c)
		}
	}
	if got := memoryEstimate(list, cfg); got < 100_000_000*100*2 {
		t.Errorf("100,000,000 strings of 100 B: estimate %s, want at least twice their bytes", formatBytes(got))
	}
	if got := memoryEstimate(unary, cfg); got > 1<<30 {
		t.Errorf("Unary alone, which keeps no strings: estimate %s", formatBytes(got))
	}
	if err := checkMemory(40<<30, 24<<30); err == nil || !strings.Contains(err.Error(), "40 GiB") || !strings.Contains(err.Error(), "24 GiB") {
		t.Errorf("checkMemory(40 GiB, 24 GiB) = %v, want a refusal naming both figures", err)
	}
	if err := checkMemory(1<<30, 24<<30); err != nil {
		t.Errorf("checkMemory(1 GiB, 24 GiB) = %v", err)
	}
}

func TestParseMemAvailable(t *testing.T) {
	got, err := parseMemAvailable([]byte("MemTotal:       32768000 kB\nMemFree:         1000 kB\nMemAvailable:   24200308 kB\n"))
	if err != nil || got != 24200308*1024 {
		t.Errorf("parseMemAvailable = %v, %v", got, err)
	}
	if _, err := parseMemAvailable([]byte("MemTotal: 1 kB\n")); err == nil {
		t.Error("no MemAvailable: no error")
	}
	if runtime.GOOS == "linux" {
		if n, err := memAvailable(); err != nil || n <= 0 {
			t.Errorf("memAvailable() = %v, %v on Linux", n, err)
		}
	}
}
