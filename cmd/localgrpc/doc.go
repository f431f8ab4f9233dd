// Command localgrpc is the command line of the localgrpc project.
//
// Its subcommand serve serves the Echo API on grpc-go or connect-go on any
// addresses at once (`localgrpc serve --stack connect unix:@echo :8080`).
// Its subcommand bench runs the benchmark suite of internal/bench — the
// same code as `go test -bench ./internal/bench` — and compares every way
// to call a gRPC service on one machine:
//
//	localgrpc bench                        # every workload and impl, about 2 minutes
//	localgrpc bench --quick                # a rougher run, about 20 seconds
//	localgrpc bench --impl 'inproc|iter' -o report.html -o results.txt
//
// For each workload it prints each impl's median time per op with its
// confidence interval, its memory per op and its ratio to grpc-go over
// localhost TCP, fastest first, as text, markdown, CSV, JSON or the Go
// benchmark format (--format); -o writes the same report to files, an HTML
// page with charts among them. Flags take one dash or two, as go test's
// do.
//
// The exit status is 0 on success, 1 if the work failed or was
// interrupted, and 2 for a bad command line.
package main
