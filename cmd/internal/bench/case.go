package bench

import (
	"flag"
	"fmt"
	"strings"
	"testing"
)

// The workloads of the comparison (see docs/cli.md), as Case.Workload names
// them.
const (
	// ListStrings (W1) is one server-streaming List call that returns
	// Config.Strings strings, respSize strings per message, drained by the
	// client with the generated Recv until io.EOF.
	ListStrings = "ListStrings"
	// Unary (W2) is one Echo Get call with a small text.
	Unary = "Unary"
	// PingPong (W3) is one round on an Echo Update stream opened once per
	// benchmark: one Send and one Recv.
	PingPong = "PingPong"
	// FanOut is W1 through a fanout.Proxy: the Config.Strings strings, 10
	// per message, dealt out to 1 or 4 backends (backends=N) that the
	// impl serves, and merged back in order by the proxy. Beside
	// ListStrings respSize=10 it shows what the proxy costs.
	FanOut = "FanOut"
	// Batching is the book store of "gRPC Streaming the Right Way": one
	// ListBooks call returning Config.Strings books of one author, one per
	// message (batch=1, BookStore) or 64 to a message (batch=64,
	// BookStoreBatch on package batch), read back book by book.
	Batching = "Batching"
	// Series is Thanos's Store API on its own kind of messages, generated
	// by gogoproto's plugin (their own Marshal, Unmarshal and Size, no
	// ProtoReflect): one Series call returning series=N series of
	// samples=M samples, one series per message, drained with the
	// generated Recv. Its iter is Thanos's own in-process client.
	Series = "Series"
)

// respSizes are the strings per ListStrings message that the suite compares.
var respSizes = []int{1, 10, 100}

// A Case is one workload run by one impl with one set of parameters.
type Case struct {
	// Workload is ListStrings, Unary, PingPong, FanOut, Batching or Series.
	Workload string
	// Impl names the way the client reaches the server, e.g. "localhost"
	// or "inproc-share-isolated". It holds no slash, so that
	// `benchstat -col /impl` works.
	Impl string
	// Params are the case's other sub-benchmark keys, as "key=value"
	// parts joined by slashes, e.g. "respSize=10"; empty if none.
	Params string

	run func(b *testing.B) error
}

// Name is the case's sub-benchmark name under its workload's benchmark:
// "impl=IMPL" followed by "/" and Params when there are any.
func (c Case) Name() string {
	if c.Params == "" {
		return "impl=" + c.Impl
	}
	return "impl=" + c.Impl + "/" + c.Params
}

// Run runs the case as a benchmark and fails b with the case's error, if
// any. Whatever the case starts stops in b's cleanup.
func (c Case) Run(b *testing.B) {
	if err := c.run(b); err != nil {
		b.Fatal(err)
	}
}

// Benchmark runs the case with testing.Benchmark, for programs that are not
// `go test`: for 1s, or what SetBenchtime says. Unlike testing.Benchmark,
// which discards what a failing benchmark logs, it returns the case's
// error.
func (c Case) Benchmark() (testing.BenchmarkResult, error) {
	var failure error
	r := testing.Benchmark(func(b *testing.B) {
		if err := c.run(b); err != nil {
			failure = err
			b.Fatal(err)
		}
	})
	if failure == nil && r.N == 0 {
		// It failed in its cleanup (closing streams), whose log
		// testing.Benchmark discarded; TestCases shows it.
		failure = fmt.Errorf("%s/%s failed; see go test -run 'TestCases/%[1]s/%[2]s' ./internal/bench", c.Workload, c.Name())
	}
	return r, failure
}

// SetBenchtime sets how long each testing.Benchmark call runs: a duration
// such as "1s", or "Nx" for exactly N ops — the -test.benchtime flag, which
// testing.Benchmark reads. It registers the testing flags first if the
// program has not (testing.Init), so that it works outside `go test`.
// It returns the previous setting, to restore.
func SetBenchtime(d string) (previous string, err error) {
	testing.Init()
	f := flag.Lookup("test.benchtime")
	previous = f.Value.String()
	return previous, f.Value.Set(d)
}

// Cases returns every case of the suite sized by cfg: for each workload and
// each of its parameters, one case per impl that takes part in it (see
// impls).
func Cases(cfg Config) []Case {
	cfg = cfg.WithDefaults()
	params := func(p ...string) string {
		if cfg.Callers > 1 {
			p = append(p, fmt.Sprintf("callers=%d", cfg.Callers))
		}
		return strings.Join(p, "/")
	}

	var cases []Case
	// add adds the cases of workload with params, one per impl that takes
	// part in it.
	add := func(workload, params string, run func(impl) func(b *testing.B) error) {
		for _, im := range availableImpls() {
			if im.skip[workload] == "" {
				cases = append(cases, Case{Workload: workload, Impl: im.name, Params: params, run: run(im)})
			}
		}
	}
	for _, size := range respSizes {
		add(ListStrings, params(fmt.Sprintf("respSize=%d", size)), func(im impl) func(*testing.B) error { return listStringsCase(cfg, size, im) })
	}
	add(Unary, params(), func(im impl) func(*testing.B) error { return unaryCase(cfg, im) })
	add(PingPong, params(), func(im impl) func(*testing.B) error { return pingPongCase(cfg, im) })
	for _, n := range fanOutBackends {
		add(FanOut, params(fmt.Sprintf("backends=%d", n), fmt.Sprintf("respSize=%d", fanOutRespSize)),
			func(im impl) func(*testing.B) error { return fanOutCase(cfg, n, im) })
	}
	for _, size := range batchSizes {
		add(Batching, params(fmt.Sprintf("batch=%d", size)), func(im impl) func(*testing.B) error { return batchingCase(cfg, size, im) })
	}
	for _, sh := range seriesShapes {
		add(Series, params(fmt.Sprintf("series=%d", sh.series), fmt.Sprintf("samples=%d", sh.samples)),
			func(im impl) func(*testing.B) error { return seriesCase(cfg, sh.series, sh.samples, im) })
	}
	return cases
}

// Workloads returns the names of the suite's workloads, in the order
// Cases lists them.
func Workloads() []string { return []string{ListStrings, Unary, PingPong, FanOut, Batching, Series} }

// Impls returns the names of the impls that work on this operating system,
// in the order Cases lists them.
func Impls() []string {
	var names []string
	for _, im := range availableImpls() {
		names = append(names, im.name)
	}
	return names
}
