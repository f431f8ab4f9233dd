package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/localgrpc/localgrpc/internal/bench"
	"golang.org/x/perf/benchfmt"
)

// benchPkg is the package whose benchmarks the CLI runs. Results name it,
// and the benchmarks, as `go test -bench` does, so that benchstat can
// compare results of either.
const benchPkg = "github.com/localgrpc/localgrpc/internal/bench"

// resultWriter writes results in the Go benchmark format, formatted by the
// testing package itself, and keeps a copy to read back.
type resultWriter struct {
	w      io.Writer
	copy   bytes.Buffer
	header bool
}

// write writes r as the line `go test -bench` prints for case c.
func (rw *resultWriter) write(c bench.Case, r testing.BenchmarkResult) error {
	var line bytes.Buffer
	if !rw.header {
		fmt.Fprintf(&line, "goos: %s\ngoarch: %s\npkg: %s\n", runtime.GOOS, runtime.GOARCH, benchPkg)
		rw.header = true
	}
	name := "Benchmark" + c.Workload + "/" + c.Name()
	if p := runtime.GOMAXPROCS(0); p != 1 {
		name += fmt.Sprintf("-%d", p)
	}
	fmt.Fprintf(&line, "%s\t%s\t%s\n", name, r.String(), r.MemString())
	rw.copy.Write(line.Bytes())
	_, err := rw.w.Write(line.Bytes())
	return err
}

// results parses what was written, with units tidied (ns/op becomes
// sec/op), as benchstat reads it.
func (rw *resultWriter) results() ([]*benchfmt.Result, error) {
	var results []*benchfmt.Result
	r := benchfmt.NewReader(bytes.NewReader(rw.copy.Bytes()), "results")
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone()) // the reader reuses rec
		case *benchfmt.SyntaxError:
			return nil, rec
		}
	}
	return results, r.Err()
}
