// Package echoclient calls the Echo API on each client stack.
//
// The stacks are grpc-go, and connect-go in each of its three protocols.
// A [Client] makes any of the four calls the same way on every stack.
// It is the client of localgrpc call and localgrpc measure.
package echoclient
