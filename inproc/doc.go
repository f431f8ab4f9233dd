// Package inproc is an in-process gRPC channel.
// Generated gRPC clients call generated gRPC servers in the same process,
// with no network and no serialization.
// They behave as they would over a socket.
//
// A [Channel] is both a [grpc.ServiceRegistrar], to register
// implementations on, and a [grpc.ClientConnInterface], to build clients
// from.
// All four kinds of method work.
// So do deadlines and cancellation, status codes and details, metadata,
// headers and trailers, interceptors and stats handlers.
//
// Two choices trade isolation for speed, per channel:
//   - [CopyMode]: [Clone] (the default) gives the receiver a deep copy of
//     each message, taken before the sender's Send returns.
//     [Share] gives the receiver its own top-level message whose fields
//     share memory with the sender's.
//     So a sender must not change a message it sent.
//     A receiver may set its message's fields, but never write into what
//     they hold (list and bytes elements, nested messages).
//     That holds even after a reslice such as l = l[:0].
//     [CallCopy] overrides the mode for one call.
//   - [Execution]: [Isolated] (the default) runs each handler on its own
//     goroutine, so a client whose context ends returns at once.
//     [Inline] runs handlers on the caller's goroutine or as its coroutine,
//     and cancellation is cooperative.
//
// What a socket refuses is refused here too, with the same code:
//   - Messages over grpc-go's default 4 MiB receive limit give
//     ResourceExhausted.
//     So do messages over the limits set by call options,
//     [WithServerMaxRecvMsgSize] and [WithServerMaxSendMsgSize].
//   - A proto3 string that is not UTF-8 gives Internal.
//     So does a proto2 required field left unset.
//
// # Metadata
//
// Metadata crosses as grpc-go's HTTP/2 transport carries it:
//   - Keys the transport owns never cross from a sender's metadata.
//     Those are pseudo-headers, content-type, user-agent, te, and the grpc-
//     status, message, encoding and timeout keys.
//     Host never crosses either.
//   - Some requests grpc-go's server transport refuses before any handler.
//     A "connection" key makes it reset the stream.
//     More than one "host" value makes it answer with the status alone.
//     Such a request opens, sends, and fails with Internal where the client
//     waits for the answer.
//     The server's stats handlers never hear of it.
//   - A handler finds the keys a transport adds: :authority ("inproc", or
//     what grpc.CallAuthority says), content-type and grpc-go's user-agent.
//   - A client's header carries the content-type.
//   - A call whose handler ends with neither sending nor setting a header
//     gets none.
//     Its content-type is in its trailer, as in a response of trailers only.
//   - A status with details adds grpc-status-details-bin to the trailer.
//   - A client that left before the status gets no trailer.
//   - A handler whose client left can no longer set or send a header or
//     trailer.
//   - A key without values does not cross.
//   - ServerStream's SetHeader and SendHeader refuse metadata gRPC does not
//     allow, with Internal.
//   - grpc.SetHeader, grpc.SendHeader, grpc.SetTrailer and
//     ServerStream.SetTrailer check nothing.
//   - Some headers and trailers HTTP/2 cannot carry: a key that is not a
//     lower-case token, a value with a control character other than tab.
//     Such a header or trailer fails the call at the client with Internal.
//     The client gets neither it nor what follows.
//
// # Statuses
//
// A status reaches the client as grpc-go's client decodes it:
//   - A message that is not UTF-8 comes with each bad byte as U+FFFD.
//   - A status protobuf cannot encode comes without details.
//     That is a message or a detail's type URL that is not UTF-8.
//   - A code at or above 2^31, which grpc-go's client cannot parse, comes as
//     Unknown, without the trailer.
//   - A status may have no details while the handler set a
//     grpc-status-details-bin in its trailer.
//     That trailer gives the whole status if its code is the status's, and
//     Internal if not.
//
// # Streams, credentials and compression
//
// Each stream buffers a bounded window per direction.
// It is counted in messages ([WithWindow]) and in bytes ([WithWindowBytes]).
// A receiver that stops reading blocks its sender, as HTTP/2 flow control
// does.
//
// Per-call credentials (grpc.PerRPCCredentials) are sent whatever their
// RequireTransportSecurity says.
// A call that never leaves the process is as private as one over TLS.
// grpc-go over an insecure socket would refuse them.
// They find the call's credentials.RequestInfo in their context, as over a
// socket.
// Its AuthInfo has security level PrivacyAndIntegrity, so credentials that
// check it (oauth's) send.
//
// Nothing is compressed:
//   - A compressor a call names must be registered, as over a socket.
//     It is otherwise ignored.
//   - A handler's incoming metadata has no grpc-accept-encoding.
//   - grpc.ClientSupportedCompressors and grpc.SetSendCompressor need
//     grpc-go's own server stream.
//     They return an error in a handler.
//
// A unary handler's decode function gives the request each time it is
// called.
// grpc-go's fails after the first call, so nothing can depend on calling it
// twice.
//
// A stream allows one sending and one receiving goroutine at a time on each
// side, as gRPC says.
// A second goroutine that sends (or receives) while another does fails the
// stream with Internal.
//
// # Messages of other code generators
//
// A message crosses as grpc-go's proto codec would carry it over a socket.
// The way it crosses is decided once per Go type.
// [Clone] and [Share] say how each kind of message is copied.
// Both modes check each message as grpc-go's encoding does:
//   - its size;
//   - UTF-8 in proto3 strings, which reads every byte of every string.
//
// With Clone, a stream's receiver hands back the message it is done with.
// The next copy goes into it.
// So a stream allocates twice a message rather than three times.
//
// Some messages have their own Marshal, Unmarshal and Size, as gogoproto
// generates them (Thanos, Cortex, etcd).
// They cross with strings that are not UTF-8.
// Their Marshal checks none, and a socket carries them.
// With Clone such a message costs one Marshal and one Unmarshal.
// With Share it costs one Size.
//
// Some generated clients take a concrete *grpc.ClientConn, as gogoproto's
// old gRPC plugin makes them (Thanos's, for one).
// They cannot be given a Channel.
// Regenerate them with protoc-gen-go-grpc, whose clients take a
// [grpc.ClientConnInterface].
package inproc
