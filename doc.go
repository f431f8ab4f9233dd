// Package localgrpc serves and calls gRPC services in-process, between
// processes of one machine (shm:), on unix and abstract sockets and on
// TCP through one code path.
//
// A [Server] registers services once and serves them on many addresses at
// once; [NewClient] returns a connection for any of them, so the same generated
// client talks to a server in the same process or on another machine,
// chosen by an address string (see [ParseAddress] for the grammar).
// [Server.Listen] binds every address, or none, and returns; from then on
// each can be dialed. [Server.Serve] serves until its context ends or the
// server stops:
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
// serialization. Unix socket files get mode 0600 unless [WithSocketMode]
// says otherwise, and no one reaches one before it has its mode.
// [WithPeerCredentials] authorizes socket clients by their kernel
// credentials, the only protection abstract sockets have; it composes with
// the transport credentials of [WithTransportCredentials]. [WithHealth]
// reports every registered service's health on every transport.
//
// shm: addresses ("shm:@NAME", "shm:PATH") carry the calls of Go clients
// in other processes of the machine in small frames of localgrpc's own
// over a unix socket, without HTTP/2, through the same interceptors,
// stats handlers, limits and peer-credential policy. grpc-go clients
// cannot dial them: serve those on a unix: address beside.
//
// No control you set is skipped in-process: interceptors, stats handlers
// and size limits given as the Server's own options apply on every
// transport. A grpc-go server option that changes what a call may do,
// given through [WithGRPCServerOptions], reaches sockets only, so
// [Server.Listen] refuses in-process addresses beside it and names what
// to use instead.
//
// [NewClient] sends plaintext by default only where nothing leaves the
// machine, judged by what the address says (in-process, unix and abstract
// sockets, loopback addresses, localhost without a trailing dot). It
// dials such an address where it says: no resolver a program registers
// or passes is asked, and a plaintext connection made elsewhere by a
// dialer of the user's is refused before a byte is sent. Any other
// address needs transport credentials, [WithClientTransportCredentials],
// or NewClient returns an error.
package localgrpc
