// Command localgrpc is the command line of the localgrpc project.
//
// Its subcommands serve, call and measure run the Echo API on grpc-go and
// connect-go:
//
//	localgrpc serve --stack connect unix:@echo :8080   # on any addresses at once
//	localgrpc call expand --address unix:@echo -m 'a b' --stack connect-grpc
//	localgrpc call update --address :8080 --count 3 -n 10000 -c 4   # measure
//	localgrpc measure                                   # every server, client, address and method
//	localgrpc descriptors -o echo.protoset              # for grpcurl, ghz and proxies
//
// Its subcommand bench runs the benchmark suite of cmd/internal/bench — the
// same code as `go test -bench . ./cmd/internal/bench` — and compares every way
// to call a gRPC service on one machine:
//
//	localgrpc bench                        # every workload and impl, about 5 minutes
//	localgrpc bench --quick                # a rougher run, about 45 seconds
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
