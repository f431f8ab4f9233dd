// Command localgrpc is the command line of the localgrpc project.
//
// For now it has one subcommand, bench, which runs the benchmark suite of
// internal/bench — the same code as `go test -bench ./internal/bench` — and
// compares the ways to call a gRPC service in the same process:
//
//	localgrpc bench            # W1 ListStrings, every impl, 5 runs each
//	localgrpc bench --quick    # a smaller, shorter run
//	localgrpc bench --workload . --impl 'inproc|iter' -o results.txt
//
// It writes the results in the Go benchmark format, for benchstat, and
// then a table of each impl's median time per op, its confidence interval,
// its allocations, and its ratio to grpc-go over localhost TCP.
//
// The exit status is 0 on success, 1 if a benchmark failed and 2 for a bad
// command line.
package main
