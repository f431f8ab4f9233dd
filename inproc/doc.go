// Package inproc is an in-process gRPC channel: generated gRPC clients call
// generated gRPC servers in the same process with no network and no
// serialization, and behave as they would over a socket.
//
// A [Channel] is both a [grpc.ServiceRegistrar], to register
// implementations on, and a [grpc.ClientConnInterface], to build clients
// from. All four kinds
// of method work, with deadlines and cancellation, status codes and
// details, metadata, headers and trailers, interceptors and stats handlers.
//
// Two choices trade isolation for speed, per channel:
//
//   - [CopyMode]: [Clone] (the default) gives the receiver a deep copy of
//     each message, taken before the sender's Send returns; [Share] gives it
//     its own top-level message whose fields share memory with the
//     sender's, so a sender must not change a message it sent, and a
//     receiver may set its message's fields but never write into what
//     they hold (list and bytes elements, nested messages), not even
//     after a reslice such as l = l[:0]. [CallCopy] overrides the mode for
//     one call.
//   - [Execution]: [Isolated] (the default) runs each handler on its own
//     goroutine, so a client whose context ends returns at once; [Inline] runs
//     handlers on the caller's goroutine or as its coroutine, and
//     cancellation is cooperative.
//
// What a socket refuses is refused here too, with the same code: messages
// over grpc-go's default 4 MiB receive limit or the limits set by call
// options, [WithServerMaxRecvMsgSize] and [WithServerMaxSendMsgSize] give
// ResourceExhausted; a proto3 string that is not UTF-8, or a proto2
// required field left unset, gives Internal.
//
// Metadata crosses as grpc-go's HTTP/2 transport carries it: the keys the
// transport owns (pseudo-headers, content-type, user-agent, te and the
// grpc- status, message, encoding and timeout keys) and host never cross
// from a sender's metadata; a request that grpc-go's server transport
// refuses before any handler (a "connection" key: it resets the stream;
// more than one "host" value: it answers with the status alone) opens,
// sends, and fails with Internal where the client waits for the answer,
// unheard of by the server's stats handlers; and a handler finds the keys
// a transport adds: :authority ("inproc", or what grpc.CallAuthority
// says), content-type and grpc-go's user-agent. A client's header carries the content-type; a call whose
// handler ends with neither sending nor setting a header gets none, and
// the content-type in its trailer, as a response of trailers only; a
// status with details adds grpc-status-details-bin to the trailer. A
// client that left before the status gets no trailer, and a handler whose
// client left can no longer set or send a header or trailer. A key
// without values does not cross. ServerStream's SetHeader and SendHeader
// refuse metadata gRPC does not allow, with Internal; grpc.SetHeader,
// grpc.SendHeader, grpc.SetTrailer and ServerStream.SetTrailer check
// nothing, and a header or trailer HTTP/2 cannot carry (a key that is not
// a lower-case token, a value with a control character other than tab)
// fails the call at the client with Internal, without it or what follows.
//
// A status reaches the client as grpc-go's client decodes it: a message
// that is not UTF-8 with each bad byte as U+FFFD; a status protobuf
// cannot encode (a message or a detail's type URL that is not UTF-8)
// without details; a code at or above 2^31, which grpc-go's client
// cannot parse, as Unknown, without the trailer; and where the status
// has no details, a grpc-status-details-bin the handler set in its
// trailer gives the whole status if its code is the status's, and
// Internal if not.
//
// Each stream buffers a bounded window per direction, in messages
// ([WithWindow]) and in bytes ([WithWindowBytes]): a receiver that stops
// reading blocks its sender, as HTTP/2 flow control does.
//
// Per-call credentials (grpc.PerRPCCredentials) are sent whatever their
// RequireTransportSecurity says: a call that never leaves the process is
// as private as one over TLS, where grpc-go over an insecure socket would
// refuse them. They find the call's credentials.RequestInfo in their
// context, as over a socket, with an AuthInfo of security level
// PrivacyAndIntegrity, so credentials that check it (oauth's) send.
//
// Nothing is compressed. A compressor a call names must be registered, as
// over a socket, and is otherwise ignored; a handler's incoming metadata
// has no grpc-accept-encoding, and grpc.ClientSupportedCompressors and
// grpc.SetSendCompressor, which need grpc-go's own server stream, return
// an error in a handler.
//
// A unary handler's decode function gives the request each time it is
// called. grpc-go's fails after the first call, so nothing can depend on
// calling it twice.
//
// A stream allows one sending and one receiving goroutine at a time on each
// side, as gRPC says; a second goroutine that sends (or receives) while
// another does fails the stream with Internal.
//
// # Messages of other code generators
//
// A message crosses as grpc-go's proto codec would carry it over a
// socket, in a way decided once per Go type: [Clone] and [Share] say how
// each kind of message is copied. Both modes check each message as
// grpc-go's encoding does: its size, and UTF-8 in proto3 strings, which
// reads every byte of every string. With Clone, a stream's receiver hands
// back the message it is done with, and the next copy goes into it, so a
// stream allocates twice a message rather than three times.
//
// Messages with their own Marshal, Unmarshal and Size, as gogoproto
// generates them (Thanos, Cortex, etcd), cross with strings that are not
// UTF-8, since their Marshal checks none and a socket carries them. With
// Clone such a message costs one Marshal and one Unmarshal, and with Share
// one Size. Generated clients
// that take a concrete *grpc.ClientConn, as gogoproto's old gRPC plugin
// makes them (Thanos's, for one), cannot be given a Channel: regenerate
// them with protoc-gen-go-grpc, whose clients take a
// [grpc.ClientConnInterface].
package inproc
