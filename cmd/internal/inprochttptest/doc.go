// Package inprochttptest holds the tests and benchmarks of package
// inprochttp that need connect-go, which the library module does not
// depend on: the same connect-go handler called in-process and over a unix
// socket, in the Connect, gRPC and gRPC-Web protocols, must behave the
// same, and in-process must be faster.
//
// Unary calls and server streams are compared in every protocol, client
// streams and bidirectional ones in all but gRPC-Web. Both ways must agree
// in messages, codes, error messages, metadata and details, headers
// (binary ones too) and trailers. Deadlines and cancellation must end
// every kind of call and reach the handler. Streams abandoned in-process
// must leave no goroutine behind; over a socket, net/http's HTTP/2 client
// leaves an abandoned bidirectional stream's handler waiting until the
// connection closes.
package inprochttptest
