package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
)

// What a bench run holds in memory, estimated before it starts, so that a
// --strings or --size the machine cannot hold is refused with the figure
// rather than dying out of memory minutes into the run.
//
// Cases run one at a time, so the run holds at most what its heaviest
// case does, plus what the process holds already. A case of ListStrings,
// FanOut or Batching builds its --strings items before its timer starts
// and keeps them while it runs (the baseline's case as much as any other);
// the items in flight and the other workloads are small beside them.

const (
	// itemOverhead is what an item costs beside its bytes: its string
	// header, its share of a message, a book's other fields.
	itemOverhead = 96
	// minItemBytes is an item's bytes at the least: a book of Batching is
	// about this much whatever --size says.
	minItemBytes = 64
	// gcHeadroom is how far the heap grows past what is live before a
	// collection, at the default GOGC of 100.
	gcHeadroom = 2
)

// bytesPerItemWorkloads are the workloads whose memory grows with --strings.
var bytesPerItemWorkloads = []string{bench.ListStrings, bench.FanOut, bench.Batching}

// memoryEstimate is how many bytes a run of cases with cfg holds at most,
// as a float64 so that no product of flags overflows.
func memoryEstimate(cases []bench.Case, cfg bench.Config) float64 {
	cfg = cfg.WithDefaults()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := float64(ms.Sys)
	if !slices.ContainsFunc(cases, func(c bench.Case) bool { return slices.Contains(bytesPerItemWorkloads, c.Workload) }) {
		return base
	}
	item := float64(max(cfg.StringSize, minItemBytes) + itemOverhead)
	return base + gcHeadroom*float64(cfg.Strings)*item
}

// checkMemory refuses a run whose estimate exceeds available bytes,
// naming the flags and the figures.
func checkMemory(estimate, available float64) error {
	if estimate <= available {
		return nil
	}
	return fmt.Errorf("--strings and --size: the run would hold about %s in memory, and this machine has %s available; "+
		"give fewer --strings or a smaller --size", formatBytes(estimate), formatBytes(available))
}

// memAvailable is the memory the kernel says a new workload can use
// without swapping (MemAvailable of /proc/meminfo), or an error where
// there is no such file: other systems than Linux.
func memAvailable() (float64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return parseMemAvailable(b)
}

// parseMemAvailable reads MemAvailable, in kB, from /proc/meminfo's text.
func parseMemAvailable(meminfo []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			break
		}
		return float64(kb) * 1024, nil
	}
	return 0, errors.New("/proc/meminfo has no MemAvailable in kB")
}

// formatBytes is n in binary units: "39 GiB".
func formatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if n >= 10 || i == 0 {
		return strconv.FormatFloat(math.Round(n), 'f', 0, 64) + " " + units[i]
	}
	return strconv.FormatFloat(n, 'f', 1, 64) + " " + units[i]
}
