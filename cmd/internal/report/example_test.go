package report_test

import (
	"os"
	"strings"

	"github.com/localgrpc/localgrpc/cmd/internal/report"
	"golang.org/x/perf/benchfmt"
)

// Comparing two impls from results in the Go benchmark format, as
// `go test -bench` prints them.
func Example() {
	const text = `
BenchmarkUnary/impl=localhost-2	10000	 68000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=inproc-share-inline-2	2000000	 311 ns/op	544 B/op	6 allocs/op
BenchmarkUnary/impl=localhost-2	10000	 66000 ns/op	8552 B/op	149 allocs/op
BenchmarkUnary/impl=inproc-share-inline-2	2000000	 320 ns/op	544 B/op	6 allocs/op
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
	if err := rep.WriteCSV(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// workload,params,gomaxprocs,impl,runs,sec_per_op,sec_per_op_low,sec_per_op_high,bytes_per_op,allocs_per_op,ratio,p,significant,baseline
	// Unary,,2,inproc-share-inline,2,3.155e-07,,,544,6,0.00470896,0.333333,false,false
	// Unary,,2,localhost,2,6.7e-05,,,8552,149,1,1,false,true
}
