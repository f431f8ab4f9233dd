// Package localgrpc serves and calls gRPC services in-process, on unix and
// abstract sockets and on TCP through one code path.
package localgrpc
