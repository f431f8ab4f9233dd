// Package inprochttp calls an [http.Handler] in the same process through an
// [http.RoundTripper]: no socket, no HTTP/2 framing, no kernel. Any client
// built on [http.Client] reaches the handler as it would over a network,
// connect-go's included, in each of its protocols (Connect, gRPC, gRPC-Web),
// and so do clients of grpc-gateway, twirp and plain REST handlers:
//
//	mux := http.NewServeMux()
//	mux.Handle(echov1connect.NewEchoHandler(server))
//	hc := &http.Client{Transport: inprochttp.NewTransport(mux)}
//	client := echov1connect.NewEchoClient(hc, "http://inproc", connect.WithGRPC())
//
// Each request is served by calling the handler's ServeHTTP on a goroutine
// of its own, with the semantics of net/http's HTTP/2 server, which
// connect-go and grpc-go's gRPC over HTTP expect:
//
//   - The request is HTTP/2.0 (ProtoMajor 2). Its body is the client's,
//     read by the handler as the client writes it, while the client reads
//     the response: full duplex, so a handler can read the next request of
//     a bidirectional stream while the client reads the last response.
//   - The response writer is an [http.Flusher] and works with
//     [http.ResponseController] (Flush, EnableFullDuplex). As on net/http,
//     writes are buffered until the handler flushes, writes 4 KiB or
//     returns; the response's head reaches the client with the first of
//     these, as [http.ResponseWriter.WriteHeader] or the first write left
//     it.
//   - Trailers: those declared in the "Trailer" header and those set under
//     [http.TrailerPrefix] reach the client's [http.Response.Trailer] once
//     its body has been read to the end.
//   - The handler's context carries the client's deadline and ends with the
//     client's cancellation, and so does the exchange: a client whose
//     context ends, or that closes the response body early, gets its error
//     at once, even from a handler that ignores its context, as over a
//     socket. The handler's context never carries the client's values; a
//     network would not carry them either. It ends when ServeHTTP returns.
//   - Memory is bounded: at most a window of response bytes (256 KiB) waits
//     for the client, and a handler that writes more waits for the client
//     to read; the request body is not buffered at all, so a client's write
//     waits for the handler's read.
//   - A handler that panics fails its exchange as net/http's HTTP/2 server
//     resets its stream: the client gets an error that HTTP/2 clients
//     recognize as a stream reset with INTERNAL_ERROR (connect-go reports
//     CodeInternal), and the process carries on. The panic is logged with
//     its stack, unless it is [http.ErrAbortHandler], which aborts the
//     response silently.
//
// What a socket has and this has not: TLS (the request's TLS is nil, for
// https URLs too), a peer address (the request's RemoteAddr is "inproc"),
// a Date response header, transparent compression, and the deprecated
// Request.Cancel channel. Headers are passed as HTTP/2 would pass them:
// keys canonical, connection-specific fields (Connection, Keep-Alive,
// Transfer-Encoding, Upgrade) left out.
//
// As with any [http.RoundTripper], the client must close each response's
// body or end its request's context: until then an unfinished handler may
// wait for the client to read.
package inprochttp
