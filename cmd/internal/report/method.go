package report

import (
	"fmt"
	"strings"
)

// Method is how `localgrpc bench` measures and what its statistics mean,
// in markdown, as the page of WriteMarkdown opens with it. It lives in
// code, beside the statistics it names, so that a page written by one
// version of the CLI says what that version did: the run counts it gives
// are benchmath's, asked at once.
func Method() string {
	var b strings.Builder
	b.WriteString(methodWorkloads)
	b.WriteString("\n\n")
	b.WriteString(methodImpls)
	b.WriteString("\n\n")
	fmt.Fprintf(&b, methodStatistics,
		UTestRuns(), IntervalRuns(0.9), IntervalRuns(0.95), IntervalRuns(0.99), noisyMarker)
	return b.String()
}

// The parts of Method. Their impl and workload names are package bench's;
// the CLI's tests check that every workload of bench has its section in
// a page written with them.
const (
	methodWorkloads = "Every way to call a gRPC service on one machine runs the same six workloads: " +
		"**ListStrings**, a server stream of 10,000 strings of 100 bytes (`--strings`, `--size`) sent 1, 10 or 100 a message (respSize); " +
		"**Unary**, one small Echo `Get`; " +
		"**PingPong**, one `Send` and `Recv` on an open bidirectional stream; " +
		"**FanOut**, the ListStrings stream (10 a message) through a `fanout.Proxy` in front of 1 or 4 backends (backends) " +
		"that share the strings and are merged back in order, which beside ListStrings respSize=10 shows what the proxy costs; " +
		"**Batching**, the book store of \"gRPC Streaming the Right Way\", 10,000 books of one author sent one a message (batch=1) " +
		"or 64 to a message with package `batch` (batch=64); " +
		"**Series**, Thanos's Store API on messages gogoproto generates (their own `Marshal`, `Unmarshal` and `Size`), " +
		"10,000 series of one sample or 1,000 of 120, one series a message."

	methodImpls = "The impls: grpc-go over TCP (`localhost`, the baseline), unix and abstract sockets (`unix`, `abstract`) and `bufconn`; " +
		"fullstorydev/grpchan copying (`grpchan`) or sharing (`grpchan-share`) messages; " +
		"this project's `inproc` in each copy mode (`clone`, `share`) and execution mode (`isolated`, `inline`); " +
		"connect-go's handlers and clients (gRPC protocol, no compression) in-process through `inprochttp` (`connect-inproc`) " +
		"and over a unix socket (`connect-unix`), in ListStrings, Unary and PingPong. " +
		"Yardsticks, not options: hand-written goroutine and channel (`chan`) and `iter.Pull2` (`iter`, in Series Thanos's own " +
		"in-process client) clients, which do only what the workload needs; the handler called directly (`direct`); " +
		"and `floor`, the least any channel keeping inproc's contract through generated code must pay. " +
		"On Linux the server also runs in a process of its own, in ListStrings, Unary and PingPong: grpc-go over a unix and an " +
		"abstract socket (`xproc-unix`, `xproc-abstract`), localgrpc's `shm:` transport (`xproc-shm`), and, in Unary only, " +
		"the machine's floor between two processes with no gRPC at all (`xproc-floor-socketpair`, `xproc-floor-ring`)."

	methodStatistics = "Each case runs `--count` times, a round of every case at a time so that a noisy machine's drift " +
		"spreads over all of them; each run is a Go benchmark of `--benchtime`, the same code as " +
		"`go test -bench . ./cmd/internal/bench`. The tables give each impl's median time per op, fastest first, with the " +
		"median's confidence interval as [low, high], B/op, allocs/op and the ratio of medians to the baseline with the " +
		"p-value of a Mann-Whitney U test: the statistics of golang.org/x/perf, as benchstat computes them. " +
		"A ratio is marked ~ where the test finds no significant difference (p ≥ 0.05); the test can tell two impls apart " +
		"only with %d runs or more each, and the intervals need %d runs at confidence 0.9, %d at 0.95 and %d at 0.99. " +
		"%s marks a row whose interval overlaps the baseline's or that of the row just above or below it: that ratio or " +
		"that order may be noise. The verdict is drawn from the same figures: what to pick and by how much, " +
		"\"no significant difference\" where the test finds none, \"cannot tell\" where the runs are too few to test, " +
		"and nothing about impls or workloads the run left out."
)
