package bench_test

import (
	"fmt"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
)

// The cases of one impl, named as `go test -bench` names them.
func ExampleCases() {
	for _, c := range bench.Cases(bench.Config{}) {
		if c.Impl == "iter" {
			fmt.Println("Benchmark" + c.Workload + "/" + c.Name())
		}
	}
	// Output:
	// BenchmarkListStrings/impl=iter/respSize=1
	// BenchmarkListStrings/impl=iter/respSize=10
	// BenchmarkListStrings/impl=iter/respSize=100
	// BenchmarkPingPong/impl=iter
	// BenchmarkSeries/impl=iter/series=10000/samples=1
	// BenchmarkSeries/impl=iter/series=1000/samples=120
}

// Running a case outside `go test`, as `localgrpc bench` does.
func ExampleCase_Benchmark() {
	if _, err := bench.SetBenchtime("100ms"); err != nil {
		panic(err)
	}
	for _, c := range bench.Cases(bench.Config{Strings: 1000}) {
		if c.Workload == bench.ListStrings && c.Impl == "inproc-share-isolated" {
			r, err := c.Benchmark()
			if err != nil {
				panic(err)
			}
			fmt.Println(c.Name(), r.String(), r.MemString())
		}
	}
}
