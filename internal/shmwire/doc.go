// Package shmwire is the framing of localgrpc's shm: transport: what two Go
// processes on one machine write to each other to carry gRPC calls, first
// over the unix socket between them and later through shared-memory rings.
//
// A connection begins with a hello from each side (magic, version,
// features, limits). After it, every frame is a 10-byte header (payload
// length, stream id, type, flags), big-endian, then its payload. Client
// streams have odd ids, as in HTTP/2.
//
// A call is a Headers frame from the client (method, timeout, content
// subtype, metadata), Message frames both ways, Headers from the server
// (its response metadata), and Trailers from the server (status, details,
// trailer metadata), which end it. Cancel ends a call from either side.
// Window frames return flow-control credit, per stream and for the
// connection. A message may span Message frames (More), the first of them
// Sized with the whole message's length where the receiver offered
// FeatureSized. GoAway from the server says no new call is taken; the
// client answers with a GoAway of its own behind every call it opened.
//
// Everything a peer wrote is untrusted: lengths, counts and ids are
// checked against the bytes at hand and the limits agreed in the hello
// before anything is allocated or parsed. The fuzz targets hold the
// reader to that.
package shmwire
