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
//   - The response writer is an [http.Flusher], an [http.CloseNotifier]
//     and an [http.Pusher], and works with [http.ResponseController]
//     (Flush, EnableFullDuplex, SetReadDeadline, SetWriteDeadline: a
//     passed write deadline resets the response as net/http's does, a
//     passed read deadline fails the handler's reads of the request body
//     and closes the client's). As on net/http, writes are buffered until
//     the handler flushes, writes more than 4 KiB or returns; the
//     response's head reaches the client with the first of these, as
//     [http.ResponseWriter.WriteHeader] or the first write left it. Once
//     the client has gone, or the write deadline has passed, a write
//     that fits in those 4 KiB still succeeds; the error comes with the
//     flush or the write that does not fit, and sticks, as on net/http.
//     After the deadline, that error is [os.ErrDeadlineExceeded]. After
//     the client's end, it holds none of the client's errors, as
//     net/http's holds none. A push fails, as net/http's fails to Go's
//     client, which disables server push: with [http.ErrNotSupported]
//     once its target and options pass net/http's checks.
//   - The response writer is the handler's until ServeHTTP returns. Used
//     after, it panics, as net/http's HTTP/2 writer does, so that a
//     handler that leaks it fails its tests as it would crash a server:
//     each of its methods but EnableFullDuplex panics. The panic names
//     the method: net/http's names Write for WriteString and Header for
//     Flush and FlushError, and its deadline setters and Push fail on a
//     nil pointer. A handler that panicked leaves a writer whose writes
//     fail instead, as on net/http.
//   - A response is no longer than the Content-Length its head declared:
//     the client's read of a byte past it fails, as net/http's client's
//     does. Once the head has gone, a handler's write past a length of 1
//     or more fails, with an error that is no [http.ErrContentLength], as
//     net/http's HTTP/2 writer's is not; past a declared 0 it does not
//     fail, as net/http's HTTP/2 writer takes 0 for no length, so only
//     the client's read fails.
//   - Trailers: those declared in the "Trailer" header and those set under
//     [http.TrailerPrefix] reach the client's [http.Response.Trailer] once
//     its body has been read to the end. Those the request declares reach
//     the handler's [http.Request.Trailer] once it has read the body's
//     end. A request whose trailers hold a field that may not be a
//     trailer (Host, Authorization, Content-Type, If-*: those
//     golang.org/x/net/http/httpguts.ValidTrailerHeader refuses) is reset
//     as net/http's server resets it: the handler's read of the body's
//     end fails, its trailers keep no value, its context ends and its
//     writes fail. The client fails with that stream error, as
//     net/http's does when it cannot send the request again. There
//     net/http's client differs when it can (the request has a GetBody):
//     it takes the reset for one worth a retry and sends the request
//     again and again until its context ends.
//   - The handler's context carries the client's deadline and ends with the
//     client's cancellation, and so does the exchange: a client whose
//     context ends, or that closes the response body early, gets its error
//     at once, even from a handler that ignores its context, as over a
//     socket. Once the client's deadline has passed by the clock, its
//     RoundTrip and reads of the body fail with
//     [context.DeadlineExceeded], though the handler answered as its
//     context ended with that deadline: over a socket, where the handler
//     does not know it, the client's context ends first. The handler's
//     context never carries the client's values; a network would not
//     carry them either. It ends when ServeHTTP returns. Unless it ends
//     with the client's deadline, its [context.Cause] is
//     [context.Canceled] however it ended, as net/http's server cancels
//     it, with what ended it in its words.
//   - The handler's context holds what net/http's server puts in it. Under
//     [http.ServerContextKey] is an *http.Server, the same for every
//     request of a transport: [WithServer]'s, or the transport's own. Under
//     [http.LocalAddrContextKey] is a [net.Addr] whose Network and String
//     are "inproc".
//   - The request's [net/http/httptrace.ClientTrace] sees what net/http's
//     HTTP/2 client shows it: WroteHeaderField for each field of the
//     head as that client writes it, pseudo-header fields first, then
//     WroteHeaders, WroteRequest, GotFirstResponseByte at the first head,
//     Got1xxResponse and Got100Continue. There is no connection, so none
//     of its hooks is called, and no wait for 100 Continue. The request
//     body is not buffered, so WroteRequest comes once the handler has
//     read its end: after a 100 Continue, which comes at the handler's
//     first read; with an error if the handler returns without reading
//     it, where net/http's client may have written a short body whole.
//   - Memory is bounded: at most a window of response bytes (256 KiB) waits
//     for the client, and a handler that writes more waits for the client
//     to read; the request body is not buffered at all, so a client's write
//     waits for the handler's read.
//   - Header lists are bounded as net/http's HTTP/2 server and client
//     bound them, counted as HTTP/2 counts them: each field's name and
//     value and 32 bytes. A request whose header list is over the server's
//     limit ([WithMaxHeaderBytes]) fails in RoundTrip and never reaches
//     the handler, as net/http's client refuses to send it once it knows
//     the limit; on a new connection, whose first request may go before
//     the client knows it, net/http's server answers 431 instead. A
//     request's trailers are bounded by that limit too, when the
//     handler reads the end of the body: over it, that read fails and
//     so does the client's request, as net/http's client resets the
//     stream rather than send them. A response whose head is over the
//     client's limit ([WithMaxResponseHeaderBytes]) fails RoundTrip with
//     a stream error, and the handler's context ends. So does a 1xx
//     response whose head is over that limit. Unless the request's trace
//     has a Got1xxResponse, so do a response's 1xx heads over it
//     together, as net/http's client bounds the 1xx heads it shows no
//     one. A response's trailers are bounded by that limit too, as
//     net/http's client bounds them: counted in the order of their keys,
//     the fields from the first that does not fit on are dropped, with no
//     error. A head, or trailers, far over it, in the ways on which
//     net/http's client fails its connection, fail RoundTrip, or the
//     client's read of the body's end, with a connection error instead
//     (see [WithMaxResponseHeaderBytes]).
//   - A handler that panics fails its exchange as net/http's HTTP/2 server
//     resets its stream: the client gets a stream error with
//     INTERNAL_ERROR (connect-go reports CodeInternal), and the process
//     carries on. The panic is logged with its stack, unless it is
//     [http.ErrAbortHandler], which aborts the response silently; the
//     client's error holds no http.ErrAbortHandler, as a reset carries
//     none.
//   - A stream reset, by either end, is an error in which [errors.As]
//     finds a golang.org/x/net/http2.StreamError with the Code net/http's
//     has, for the client and for the handler's reads of the request
//     body alike: INTERNAL_ERROR for a handler's panic or passed write
//     deadline; PROTOCOL_ERROR for a head over the client's limit, for
//     request trailers that may not be trailers, and for a trace's
//     Got1xxResponse that returns an error (the StreamError's Cause,
//     which errors.Is does not find in the client's error itself);
//     CANCEL for a client that cancels or closes the body early; NO_ERROR
//     for a read after the handler returned, before the body's end, as
//     net/http's server resets a stream whose client still sends.
//   - The handler's reads of the request body after it closed it fail
//     with an error that is no [http.ErrBodyReadAfterClose] ("body closed
//     by handler"), as on net/http's HTTP/2 server, whose HTTP/1 server
//     returns that one.
//
// What a socket has and this has not: TLS (the request's TLS is nil, for
// https URLs too), a peer address (the request's RemoteAddr is "inproc"),
// a local address (the one in the handler's context is "inproc" too), a
// connection (the server in the handler's context serves none: the
// transport reads none of its fields, calls neither its BaseContext nor
// its ConnContext, and its Shutdown and Close stop nothing here), a Date
// response header (though the client's limit on a response head counts
// the one net/http's server would add), transparent compression, and the deprecated
// Request.Cancel channel. Requests cross as net/http's HTTP/2 client sends
// them and its server reads them: what that client refuses (an Upgrade, a
// Transfer-Encoding but chunked, an invalid Host) is refused, a "TE" but
// "trailers" is answered 400, "OPTIONS *" is answered 200 with a
// Content-Length of 0 and never reaches the handler (as net/http's
// server answers it unless its DisableGeneralOptionsHandler, which the
// transport does not read), the URL is parsed from the path sent, the
// Host is in punycode, headers have canonical keys, connection-specific
// fields (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding,
// Upgrade) are left out, cookies are joined in one field, an empty Cookie value is not
// sent, one User-Agent is kept, and "Expect: 100-continue" is answered at
// the handler's first read of the body, unless a head, a 1xx one
// included, has gone before it. A request without a body has a Body
// that reads none (io.EOF), never [http.NoBody], as on net/http's
// server, and its first read sends 100 Continue as well. The files of a
// multipart form the
// handler parsed (Request.MultipartForm) are removed once it returns or
// panics, before its response ends, as net/http's server removes them.
// The handler reads no more of the
// body than its ContentLength, and none of it after returning. There
// net/http's server differs: it may still give a goroutine the handler
// left what it had of a body the client had sent whole. A ContentLength
// below -1 is sent as unknown, so the handler sees -1. Such a request
// fails RoundTrip, as net/http's client fails at its first read of such
// a body. For a length within a read of math.MinInt64, net/http's count
// of the bytes left wraps, and it sends the body instead. Responses
// cross as net/http's server sends them. Keys of the handler's header
// that differ only in case reach the client as one, with their values in
// the order of the sorted keys. A final head has no
// Connection, has Transfer-Encoding only as "trailers", and has the
// other connection-specific fields (Keep-Alive, Proxy-Connection,
// Upgrade), which the client's limit counts. A 1xx head has no
// Content-Length nor Transfer-Encoding, and has Connection and the rest.
// As net/http's server, the transport reads only the canonical keys of
// the handler's header for itself: one set straight in the map in
// another case ("content-length", "content-type", "trailer",
// "connection") is a field like any other, which the client merges with
// what the server adds. So a lower-case "content-length" bounds no
// write, and the client knows no length if a counted one joins it; a
// lower-case "trailer" lists its keys in the client's Response.Trailer
// but declares none; a lower-case "connection" reaches the client; a
// detected Content-Type follows a lower-case one.
//
// As with any [http.RoundTripper], the client must close each response's
// body or end its request's context: until then an unfinished handler may
// wait for the client to read.
//
// The package needs net/http alone, so the library module gains no
// dependency from it. Its tests check what the handler and the client see
// against net/http's HTTP/2 server and client over a unix socket, side by
// side. To reach the same handler from another process, serve it on a
// unix socket with localgrpc.Listen and call it through
// localgrpc.HTTPClient.
package inprochttp
