// Package inproc is an in-process gRPC channel: generated gRPC clients call
// generated gRPC servers in the same process with no network and no
// serialization, and behave as they would over a socket.
//
// A Channel is both a grpc.ServiceRegistrar, to register implementations
// on, and a grpc.ClientConnInterface, to build clients from. All four kinds
// of method work, with deadlines and cancellation, status codes and
// details, metadata, headers and trailers, interceptors and stats handlers.
//
// Two choices trade isolation for speed, per channel:
//
//   - CopyMode: Clone (the default) gives the receiver a deep copy of each
//     message; Share gives it its own top-level message whose fields share
//     memory with the sender's. CallCopy overrides the mode for one call.
//   - Execution: Isolated (the default) runs each handler on its own
//     goroutine, so a client whose context ends returns at once; Inline runs
//     handlers on the caller's goroutine or as its coroutine, and
//     cancellation is cooperative.
//
// Each stream buffers a bounded window of messages per direction
// (WithWindow): a receiver that stops reading blocks its sender, as HTTP/2
// flow control does.
package inproc
