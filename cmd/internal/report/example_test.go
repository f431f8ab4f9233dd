package report_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/localgrpc/localgrpc/cmd/internal/report"
	"golang.org/x/perf/benchfmt"
)

// Comparing impls from results in the Go benchmark format, as `go test
// -bench` prints them, and concluding: a verdict whose figures are the
// report's, then the table as CSV, and beside it the CSV of what the
// table leaves out: the verdict, the settings, the environment, the notes.
func Example() {
	const text = `
BenchmarkUnary/impl=localhost-2	10000	 68000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=unix-2	10000	 52000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=inproc-clone-isolated-2	500000	 1700 ns/op	664 B/op	8 allocs/op
BenchmarkUnary/impl=localhost-2	10000	 66000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=unix-2	10000	 67000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=inproc-clone-isolated-2	500000	 1750 ns/op	664 B/op	8 allocs/op
BenchmarkUnary/impl=localhost-2	10000	 71000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=unix-2	10000	 59000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=inproc-clone-isolated-2	500000	 1690 ns/op	664 B/op	8 allocs/op
BenchmarkUnary/impl=localhost-2	10000	 69000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=unix-2	10000	 70000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=inproc-clone-isolated-2	500000	 1720 ns/op	664 B/op	8 allocs/op
`
	var results []*benchfmt.Result
	for r := benchfmt.NewReader(strings.NewReader(text), "example"); r.Scan(); {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			results = append(results, res.Clone())
		}
	}
	env := report.Environment{GoVersion: "go1.26.0", GOOS: "linux", GOARCH: "amd64", NumCPU: 2, GOMAXPROCS: []int{2}}
	rep, err := report.Build(env, results, "localhost", 0.9)
	if err != nil {
		panic(err)
	}
	rep.Settings = []report.Setting{{Key: "count", Value: "4"}}
	rep.Verdict = rep.Conclude()
	for _, v := range rep.Verdict {
		fmt.Println(v)
	}
	if err := rep.WriteCSV(os.Stdout); err != nil {
		panic(err)
	}
	fmt.Println()
	if err := rep.WriteCSVContext(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// For calls within one process, pick inproc-clone-isolated, inproc's default (Clone copies every message, Isolated runs each handler on its own goroutine: safe for any handler): it is 40× faster than localhost (grpc-go over TCP) in this run (Unary: 40×).
	// Across processes, unix shows no significant difference from localhost (grpc-go over TCP) in this run (Unary).
	// workload,params,gomaxprocs,impl,runs,sec_per_op,sec_per_op_low,sec_per_op_high,bytes_per_op,allocs_per_op,ratio,p,significant,baseline,noisy,p50_sec_per_call,p99_sec_per_call
	// Unary,,2,inproc-clone-isolated,4,1.71e-06,,,664,8,0.0249635,0.0285714,true,false,true,,
	// Unary,,2,unix,4,6.3e-05,,,8552,149,0.919708,0.342857,false,false,true,,
	// Unary,,2,localhost,4,6.85e-05,,,8552,149,1,1,false,true,true,,
	//
	// kind,key,value
	// verdict,1,"For calls within one process, pick inproc-clone-isolated, inproc's default (Clone copies every message, Isolated runs each handler on its own goroutine: safe for any handler): it is 40× faster than localhost (grpc-go over TCP) in this run (Unary: 40×)."
	// verdict,2,"Across processes, unix shows no significant difference from localhost (grpc-go over TCP) in this run (Unary)."
	// setting,count,4
	// environment,go,go1.26.0
	// environment,goos,linux
	// environment,goarch,amd64
	// environment,cpu,
	// environment,numcpu,2
	// environment,gomaxprocs,2
	// environment,baseline,localhost
	// environment,confidence,0.9
	// noise,rows,"Noise: 3 of 3 rows (100%) have an interval overlapping those they are compared with (marked !); to narrow the intervals, rerun with a higher --count, on a quieter machine, or with a --cpu below the machine's CPUs so that other work has a CPU of its own."
	// note,1,need >= 5 samples for confidence interval at level 0.9
}
