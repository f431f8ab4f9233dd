// Package inprochttptest holds the tests and benchmarks of package
// inprochttp that need connect-go, which the library module does not
// depend on: the same connect-go handler called in-process and over a unix
// socket, in the Connect, gRPC and gRPC-Web protocols, must behave the
// same, and in-process must be faster.
package inprochttptest
