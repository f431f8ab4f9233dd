// Package connectserve serves connect-go handlers the way localgrpc.Server
// serves grpc-go services: on unix, abstract and TCP addresses of the
// localgrpc grammar at once, over HTTP/2 without TLS (and HTTP/1.1, for
// the Connect protocol's unary calls), with gRPC health checking and
// server reflection beside them.
package connectserve
