// Package bench is the benchmark suite that runs localgrpc and its peers
// side by side, so that one implementation of each benchmark serves both
// `go test -bench` and `localgrpc bench`.
//
// A benchmark is a workload (ListStrings, Unary, PingPong, FanOut, the
// ListStrings stream through a fanout.Proxy, and Batching, a book store
// one book per message or 64 with package batch) run by an impl:
// one way for a generated client to reach a server in the same process —
// grpc-go over TCP, unix and abstract sockets and bufconn, fullstorydev's
// grpchan, hand-written channel and iterator clients, the server called
// directly, and inproc in each of its modes. Cases lists every pair as a
// Case whose Name reads "impl=NAME/KEY=VALUE", so that
//
//	go test -run '^$' -bench ListStrings -count 6 ./internal/bench | tee new.txt
//	benchstat -col /impl new.txt
//
// compares the impls of each workload, and
//
//	go run ./cmd/localgrpc bench --quick
//
// runs the same cases and prints such a comparison itself.
package bench
