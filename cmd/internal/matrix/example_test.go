package matrix_test

import (
	"fmt"

	"github.com/localgrpc/localgrpc/cmd/internal/matrix"
)

// The rows of a grpc-go server and a connect-go one, each on a unix
// socket: a grpc-go server takes the gRPC protocol alone.
func ExamplePairings() {
	addrs := map[string]map[string]matrix.ServedAt{
		matrix.GRPCServer:    {"unix": {Addr: "unix:/tmp/grpc.sock"}},
		matrix.ConnectServer: {"unix": {Addr: "unix:/tmp/connect.sock"}},
	}
	for _, row := range matrix.Pairings(addrs) {
		fmt.Println(row.Server, row.Client, row.Addr)
	}
	// Output:
	// grpc grpc unix:/tmp/grpc.sock
	// grpc connect-grpc unix:/tmp/grpc.sock
	// connect grpc unix:/tmp/connect.sock
	// connect connect unix:/tmp/connect.sock
	// connect connect-grpc unix:/tmp/connect.sock
	// connect connect-grpc-web unix:/tmp/connect.sock
}
