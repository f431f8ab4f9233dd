// Package localgrpc serves and calls gRPC services through one code path.
// It reaches them in-process, between processes of one machine (shm:), on
// unix and abstract sockets, and on TCP.
//
// A [Server] registers services once and serves them on many addresses at
// once.
// [NewClient] returns a connection for any of them.
// So the same generated client talks to a server in the same process or on
// another machine, chosen by an address string.
// [ParseAddress] gives the grammar.
// [Server.Listen] binds every address, or none, and returns.
// From then on each address can be dialed.
// [Server.Serve] serves until its context ends or the server stops:
//
//	srv := localgrpc.NewServer(localgrpc.WithHealth())
//	pb.RegisterXServer(srv, impl)
//	if err := srv.Listen("inproc:x", "unix:/run/x.sock", "unix:@x", "127.0.0.1:8080"); err != nil {
//		return err
//	}
//	go srv.Serve(ctx)
//	cc, err := localgrpc.NewClient("inproc:x")
//	client := pb.NewXClient(cc)
//
// In-process addresses are served by an [inproc.Channel]: no network and no
// serialization.
//
// Unix socket files are made with care:
//   - They get mode 0600 unless [WithSocketMode] says otherwise.
//   - No one reaches one before it has its mode, whatever the umask.
//   - On Linux a socket is bound at its path with that mode from the start,
//     through a umask of its own thread.
//     So ss and /proc/net/unix show the path.
//   - Elsewhere, or where that cannot be, it is bound in a private directory
//     and linked into place.
//   - A socket path may be anything a unix socket allows, up to 107 bytes.
//   - A stale socket left by a dead server is replaced.
//     A live one is never touched.
//   - Of servers racing for one path, exactly one wins.
//   - The server removes its socket files when it stops.
//
// [WithPeerCredentials] authorizes socket clients by their kernel
// credentials, the only protection abstract sockets have.
// It composes with the transport credentials of [WithTransportCredentials].
// [WithHealth] reports every registered service's health on every
// transport.
//
// No control you set is skipped in-process.
// Interceptors, stats handlers and size limits given as the Server's own
// options apply on every transport.
// Socket settings such as [WithServerKeepaliveParams] concern sockets alone.
// grpc-go's own server options, given through [WithGRPCServerOptions],
// reach sockets only.
// So [Server.Listen] refuses in-process addresses beside them, and names
// what to use instead.
//
// [NewClient] sends plaintext by default only where nothing leaves the
// machine.
// It judges that by what the address says: in-process, unix and abstract
// sockets, loopback addresses, localhost without a trailing dot.
// It dials such an address where it says:
//   - No resolver a program registers or passes is asked.
//   - A plaintext connection made elsewhere by a dialer of the user's is
//     refused before a byte is sent.
//
// Any other address needs transport credentials
// ([WithClientTransportCredentials]), or NewClient returns an error.
//
// # Between Go processes: shm:
//
// shm: addresses ("shm:@NAME", "shm:PATH") carry the calls of Go clients in
// other processes of the machine.
// They carry them over a unix socket, in small frames of localgrpc's own,
// without HTTP/2.
// There is no HPACK, and each message is encoded once, by the call's codec.
// A shm:PATH socket file is made with the care of a unix: one.
//
// These apply as on other transports:
//   - the server's interceptors, stats handlers, limits, health, reflection
//     and peer-credential policy;
//   - deadlines, cancellation, headers, trailers and statuses with details.
//
// [PeerCredFromContext] gives a handler the client process's uid, gid and
// pid.
// A peer that dies ends the calls in flight on the other side at once, with
// Unavailable.
//
// grpc-go clients, grpcurl among them, cannot dial shm: sockets.
// Their calls fail with Unavailable and a message naming the transport.
// So serve them on a unix: address beside.
// Choose shm: over unix: where both ends are Go programs of yours and the
// call rate matters.
//
// grpc-go's own options do not reach shm: calls, as they do not reach
// in-process ones:
//   - A server refuses shm: addresses where it refuses inproc: ones.
//   - A server also refuses them where it has transport credentials, which
//     the framing does not carry.
//   - [NewClient] refuses a shm: address given any [WithGRPCDialOptions] or
//     transport credentials.
//   - Retries, service config and keepalive do not apply.
//
// As in-process:
//   - nothing is compressed;
//   - client interceptors get a nil *grpc.ClientConn;
//   - a handler's grpc.SetSendCompressor and
//     grpc.ClientSupportedCompressors return an error.
//
// On Linux, once both sides offer them, each direction has a ring of 1 MiB
// in a sealed memfd passed over the socket.
// Its reader is woken through an eventfd only when it sleeps.
// So a burst of messages costs one wake-up.
// The socket stays the liveness channel.
//
// Flow control is per stream.
// A stream may have 1 MiB in flight to a reader that does not read.
// grpc-go's HTTP/2 window starts at 64 KiB, so a sender blocks later than
// over unix:.
// [WithShmSpin] and [WithClientShmSpin] let a reader spin before it sleeps.
// That pays only on machines with idle cores.
// [Server.GracefulStop] serves the calls a client sent before it heard of
// the drain, as grpc-go's does.
package localgrpc
