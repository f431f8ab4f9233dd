// Package echo implements the Echo API of proto/echo/v1 on both Go gRPC
// stacks.
// Its methods:
//   - Get returns the request's text.
//   - Expand streams one response per word.
//   - Collect joins a stream of texts.
//   - Update answers each request as it arrives.
//
// [Server] is the service for grpc-go, and so for inproc and
// localgrpc.Server.
// The functions Get, Expand, Collect and Update are that behaviour over
// plain functions.
// The CLI's connect-go server shares them, in the Connect, gRPC and
// gRPC-Web protocols.
package echo
