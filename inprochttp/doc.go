// Package inprochttp calls an [http.Handler] in the same process through an
// [http.RoundTripper].
// There is no socket, no HTTP/2 framing and no kernel.
// Any client built on [http.Client] reaches the handler as it would over a
// network.
// That includes connect-go's, in each of its protocols (Connect, gRPC,
// gRPC-Web), and clients of grpc-gateway, twirp and plain REST handlers:
//
//	mux := http.NewServeMux()
//	mux.Handle(echov1connect.NewEchoHandler(server))
//	hc := &http.Client{Transport: inprochttp.NewTransport(mux)}
//	client := echov1connect.NewEchoClient(hc, "http://inproc", connect.WithGRPC())
//
// Each request is served by calling the handler's ServeHTTP on a goroutine
// of its own.
// It has the semantics of net/http's HTTP/2 server, which connect-go and
// grpc-go's gRPC over HTTP expect.
//
// # Bodies and the response writer
//
//   - The request is HTTP/2.0 (ProtoMajor 2).
//   - Its body is the client's, read by the handler as the client writes it,
//     while the client reads the response.
//     This is full duplex: a handler can read the next request of a
//     bidirectional stream while the client reads the last response.
//   - The response writer is an [http.Flusher], an [http.CloseNotifier] and
//     an [http.Pusher].
//     It works with [http.ResponseController]: Flush, EnableFullDuplex,
//     SetReadDeadline and SetWriteDeadline.
//   - A passed write deadline resets the response, as net/http's does.
//   - A passed read deadline fails the handler's reads of the request body
//     and closes the client's.
//   - As on net/http, writes are buffered until the handler flushes, writes
//     more than 4 KiB or returns.
//     The response's head reaches the client with the first of these.
//     It goes as [http.ResponseWriter.WriteHeader] or the first write left
//     it.
//   - Once the client has gone, or the write deadline has passed, a write
//     that fits in those 4 KiB still succeeds.
//     The error comes with the flush or the write that does not fit, and
//     sticks, as on net/http.
//     After the deadline, that error is [os.ErrDeadlineExceeded].
//     After the client's end, it holds none of the client's errors, as
//     net/http's holds none.
//   - A push fails with [http.ErrNotSupported] once its target and options
//     pass net/http's checks.
//     So does net/http's push to Go's client, which disables server push.
//   - The response writer is the handler's until ServeHTTP returns.
//     Used after, it panics, as net/http's HTTP/2 writer does.
//     So a handler that leaks it fails its tests as it would crash a server.
//     Each of its methods but EnableFullDuplex panics.
//     The panic names the method.
//     There net/http's differs: it names Write for WriteString, and Header
//     for Flush and FlushError.
//     net/http's deadline setters and Push fail on a nil pointer.
//   - A handler that panicked leaves a writer whose writes fail instead, as
//     on net/http.
//   - A response is no longer than the Content-Length its head declared.
//     The client's read of a byte past it fails, as net/http's client's
//     does.
//     Once the head has gone, a handler's write past a length of 1 or more
//     fails.
//     Its error is no [http.ErrContentLength], as net/http's HTTP/2 writer's
//     is not.
//     A write past a declared 0 does not fail, as net/http's HTTP/2 writer
//     takes 0 for no length.
//     Only the client's read fails then.
//   - The handler's reads of the request body after it closed it fail.
//     Their error is no [http.ErrBodyReadAfterClose] ("body closed by
//     handler"), as on net/http's HTTP/2 server.
//     net/http's HTTP/1 server returns that one.
//   - Memory is bounded.
//     At most a window of response bytes (256 KiB) waits for the client.
//     A handler that writes more waits for the client to read.
//     The request body is not buffered at all, so a client's write waits for
//     the handler's read.
//
// # Trailers
//
//   - Trailers declared in the "Trailer" header reach the client's
//     [http.Response.Trailer] once its body has been read to the end.
//     So do those set under [http.TrailerPrefix].
//   - Trailers the request declares reach the handler's
//     [http.Request.Trailer] once it has read the body's end.
//   - Some fields may not be trailers: Host, Authorization, Content-Type,
//     If-*, those that golang.org/x/net/http/httpguts.ValidTrailerHeader
//     refuses.
//     A request whose trailers hold one is reset as net/http's server resets
//     it.
//     The handler's read of the body's end fails, its trailers keep no
//     value, its context ends and its writes fail.
//     The client fails with that stream error, as net/http's does when it
//     cannot send the request again.
//     There net/http's client differs when it can (the request has a
//     GetBody).
//     It takes the reset for one worth a retry.
//     It sends the request again and again until its context ends.
//
// # Contexts
//
//   - The handler's context carries the client's deadline.
//     It ends with the client's cancellation, and so does the exchange.
//   - A client whose context ends, or that closes the response body early,
//     gets its error at once.
//     This holds even for a handler that ignores its context, as over a
//     socket.
//   - Once the client's deadline has passed by the clock, its RoundTrip and
//     reads of the body fail with [context.DeadlineExceeded].
//     They fail so even though the handler answered as its context ended
//     with that deadline.
//     Over a socket, where the handler does not know the deadline, the
//     client's context ends first.
//   - The handler's context never carries the client's values.
//     A network would not carry them either.
//   - The handler's context ends when ServeHTTP returns.
//     Unless it ends with the client's deadline, its [context.Cause] is
//     [context.Canceled] however it ended.
//     That is how net/http's server cancels it, with what ended it in its
//     words.
//   - The handler's context holds what net/http's server puts in it.
//     Under [http.ServerContextKey] is an *http.Server, the same for every
//     request of a transport: [WithServer]'s, or the transport's own.
//     Under [http.LocalAddrContextKey] is a [net.Addr] whose Network and
//     String are "inproc".
//
// # Traces
//
// The request's [net/http/httptrace.ClientTrace] sees what net/http's
// HTTP/2 client shows it, in this order:
//   - WroteHeaderField for each field of the head as that client writes
//     it, pseudo-header fields first;
//   - WroteHeaders;
//   - WroteRequest;
//   - GotFirstResponseByte at the first head;
//   - Got1xxResponse and Got100Continue.
//
// More on traces:
//   - There is no connection, so none of its connection hooks is called.
//     There is no wait for 100 Continue.
//   - The request body is not buffered.
//     So WroteRequest comes once the handler has read the body's end.
//     That is after a 100 Continue, which comes at the handler's first read.
//   - WroteRequest has an error if the handler returns without reading the
//     body.
//     There net/http's client may have written a short body whole.
//
// # Header limits
//
//   - Header lists are bounded as net/http's HTTP/2 server and client bound
//     them.
//     They are counted as HTTP/2 counts them: each field's name and value,
//     and 32 bytes.
//   - A request whose header list is over the server's limit
//     ([WithMaxHeaderBytes]) fails in RoundTrip and never reaches the
//     handler.
//     net/http's client likewise refuses to send it once it knows the limit.
//     On a new connection, the first request may go before the client knows
//     the limit.
//     net/http's server answers that one 431 instead.
//   - A request's trailers are bounded by that limit too, when the handler
//     reads the end of the body.
//     Over it, that read fails and so does the client's request.
//     net/http's client likewise resets the stream rather than send them.
//   - A response whose head is over the client's limit
//     ([WithMaxResponseHeaderBytes]) fails RoundTrip with a stream error.
//     The handler's context ends.
//     So it goes for a 1xx response whose head is over that limit.
//   - Unless the request's trace has a Got1xxResponse, it goes so too for a
//     response's 1xx heads over the limit together.
//     net/http's client bounds the 1xx heads it shows no one the same way.
//   - A response's trailers are bounded by that limit too, as net/http's
//     client bounds them.
//     They are counted in the order of their keys.
//     The fields from the first that does not fit on are dropped, with no
//     error.
//   - A head, or trailers, far over the limit fail with a connection error
//     instead, in the ways on which net/http's client fails its connection
//     (see [WithMaxResponseHeaderBytes]).
//     That error fails RoundTrip, or the client's read of the body's end.
//
// # Panics and resets
//
//   - A handler that panics fails its exchange as net/http's HTTP/2 server
//     resets its stream.
//     The client gets a stream error with INTERNAL_ERROR (connect-go reports
//     CodeInternal), and the process carries on.
//   - The panic is logged with its stack, unless it is
//     [http.ErrAbortHandler].
//     That one aborts the response silently.
//     The client's error holds no http.ErrAbortHandler, as a reset carries
//     none.
//   - A stream reset, by either end, is an error in which [errors.As] finds
//     a golang.org/x/net/http2.StreamError.
//     Its Code is the one net/http's has.
//     This holds for the client and for the handler's reads of the request
//     body alike.
//   - For a Got1xxResponse that returns an error, that error is the
//     StreamError's Cause.
//     errors.Is does not find it in the client's error itself.
//
// A reset's Code is:
//   - INTERNAL_ERROR for a handler's panic or passed write deadline;
//   - PROTOCOL_ERROR for a head over the client's limit, for request
//     trailers that may not be trailers, and for a trace's Got1xxResponse
//     that returns an error;
//   - CANCEL for a client that cancels or closes the body early;
//   - NO_ERROR for a read after the handler returned, before the body's
//     end, as net/http's server resets a stream whose client still sends.
//
// # What a socket has and this has not
//
//   - TLS: the request's TLS is nil, for https URLs too.
//   - A peer address: the request's RemoteAddr is "inproc".
//   - A local address: the one in the handler's context is "inproc" too.
//   - A connection.
//     The server in the handler's context serves none.
//     The transport reads none of its fields and calls neither its
//     BaseContext nor its ConnContext.
//     Its Shutdown and Close stop nothing here.
//   - A Date response header.
//     The client's limit on a response head still counts the one net/http's
//     server would add.
//   - Transparent compression.
//   - The deprecated Request.Cancel channel.
//
// # Requests
//
// Requests cross as net/http's HTTP/2 client sends them and its server reads
// them:
//   - What that client refuses is refused: an Upgrade, a Transfer-Encoding
//     but chunked, an invalid Host.
//   - A "TE" but "trailers" is answered 400.
//   - "OPTIONS *" is answered 200 with a Content-Length of 0 and never
//     reaches the handler.
//     net/http's server answers it so unless its
//     DisableGeneralOptionsHandler, which the transport does not read.
//   - The URL is parsed from the path sent.
//   - The Host is in punycode.
//   - Headers have canonical keys.
//   - Connection-specific fields are left out: Connection, Keep-Alive,
//     Proxy-Connection, Transfer-Encoding, Upgrade.
//   - Cookies are joined in one field, and an empty Cookie value is not
//     sent.
//   - One User-Agent is kept.
//   - "Expect: 100-continue" is answered at the handler's first read of the
//     body.
//     It is not answered if a head, a 1xx one included, has gone before it.
//   - A request without a body has a Body that reads none (io.EOF), never
//     [http.NoBody], as on net/http's server.
//     Its first read sends 100 Continue as well.
//   - The files of a multipart form the handler parsed
//     (Request.MultipartForm) are removed once it returns or panics.
//     They are removed before its response ends, as net/http's server
//     removes them.
//   - The handler reads no more of the body than its ContentLength, and none
//     of it after returning.
//     There net/http's server differs.
//     It may still give a goroutine the handler left what it had of a body
//     the client had sent whole.
//   - A ContentLength below -1 is sent as unknown, so the handler sees -1.
//     Such a request fails RoundTrip, as net/http's client fails at its
//     first read of such a body.
//     For a length within a read of math.MinInt64, net/http's count of the
//     bytes left wraps, and it sends the body instead.
//
// # Responses
//
// Responses cross as net/http's server sends them:
//   - Keys of the handler's header that differ only in case reach the client
//     as one.
//     Their values come in the order of the sorted keys.
//   - A final head has no Connection.
//     It has Transfer-Encoding only as "trailers".
//     It has the other connection-specific fields (Keep-Alive,
//     Proxy-Connection, Upgrade), which the client's limit counts.
//   - A 1xx head has no Content-Length nor Transfer-Encoding.
//     It has Connection and the rest.
//   - As net/http's server, the transport reads only the canonical keys of
//     the handler's header for itself.
//     A key set straight in the map in another case is a field like any
//     other: "content-length", "content-type", "trailer", "connection".
//     The client merges it with what the server adds.
//   - So a lower-case "content-length" bounds no write.
//     The client knows no length if a counted one joins it.
//   - A lower-case "trailer" lists its keys in the client's
//     Response.Trailer but declares none.
//   - A lower-case "connection" reaches the client.
//   - A detected Content-Type follows a lower-case one.
//
// # Closing
//
// As with any [http.RoundTripper], the client must close each response's
// body or end its request's context.
// Until then, an unfinished handler may wait for the client to read.
//
// # Dependencies and tests
//
// The package needs net/http and golang.org/x/net, which the library module
// already requires, so the module gains no dependency from it.
// Its tests check what the handler and the client see against net/http's
// HTTP/2 server and client over a unix socket, side by side.
// To reach the same handler from another process, serve it on a unix socket
// with localgrpc.Listen.
// Then call it through localgrpc.HTTPClient.
package inprochttp
