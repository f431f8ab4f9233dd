package inproc

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// What gRPC's HTTP/2 transport does to metadata, done here so that
// handlers and clients see what they would see over a socket (grpc-go's
// transport is the reference): a sender's metadata never carries the keys
// the transport owns, and the receiver finds the ones the transport adds.

// reservedKey reports a key that the transport owns: grpc-go's sender
// leaves it out of what it sends, whoever set it.
func reservedKey(k string) bool {
	if k != "" && k[0] == ':' {
		return true
	}
	switch k {
	case "content-type", "user-agent", "grpc-message-type", "grpc-encoding",
		"grpc-message", "grpc-status", "grpc-timeout", "te":
		return true
	}
	return false
}

// A refusedRequest is how grpc-go's server transport answers a request
// whose header it takes for malformed, before its server sees the call
// (http2_server.go operateHeaders): its stats handlers hear nothing of it.
// The client's NewStream and Sends succeed; it learns of the refusal
// where it waits for the answer, with err's status. If reset, the stream
// is reset and no header or trailer comes; otherwise the status comes
// alone, trailers only.
type refusedRequest struct {
	err   error
	reset bool
}

func (r *refusedRequest) Error() string { return r.err.Error() }

// errConnectionKey refuses a request whose metadata has a "connection"
// key: HTTP/2 makes such a request malformed, and grpc-go's server resets
// the stream (PROTOCOL_ERROR), which its client reports as Internal.
var errConnectionKey = &refusedRequest{reset: true,
	err: status.Error(codes.Internal, "stream terminated by RST_STREAM with error code: PROTOCOL_ERROR")}

// hostValues refuses a request with n "host" values, more than the one
// HTTP/2 allows (gRFC A41): grpc-go's server answers it with Internal.
func hostValues(n int) error {
	return &refusedRequest{err: status.Errorf(codes.Internal,
		"num values of :authority: 1, num values of host: %d, both must only have 1 value as per HTTP/2 spec", n)}
}

// toRequest makes md, the client's own copy, what a server receives: no
// reserved key, no "host", which the server drops in favour of the
// :authority the client's transport sends, and no key without values,
// which grpc-go's transport writes as no header field at all. It returns
// a *refusedRequest for a request the server's transport refuses: too
// many "host" values first, as grpc-go checks them first, then a
// "connection" key.
func toRequest(md metadata.MD) error {
	if len(md) == 0 {
		return nil // most calls': a range over it costs more than the call
	}
	var refused error
	for k, v := range md {
		switch {
		case len(v) == 0:
			delete(md, k)
		case k == "host" && len(v) > 1:
			refused = hostValues(len(v))
		case k == "connection" && refused == nil:
			refused = errConnectionKey
		case reservedKey(k), k == "host":
			delete(md, k)
		}
	}
	return refused
}

// userAgent is what grpc-go's client sends when the application adds no
// user agent of its own.
var userAgent = []string{"grpc-go/" + grpc.Version}

// defaultAuthority is the :authority of a call that sets none
// (grpc.CallAuthority): a Channel has no target to take one from.
const defaultAuthority = "inproc"

// incomingMD is the metadata a handler receives: the request's, with the
// keys a socket's transport adds, added on the first look (most handlers
// never look). md is the call's own copy, which only this reads once the
// handler runs.
func (c *call) incomingMD() metadata.MD {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mdComplete {
		if c.md == nil {
			c.md = make(metadata.MD, 3)
		}
		c.md[":authority"] = []string{c.info.authority()}
		c.md["content-type"] = []string{c.info.contentType()}
		c.md["user-agent"] = userAgent
		c.mdComplete = true
	}
	return c.md
}

// toResponse is a copy of md as a client receives it in a header or
// trailer: no reserved key, no key without values (grpc-go's transport
// writes a header field a value), and contentType, if not empty, as the
// transport adds it.
func toResponse(md metadata.MD, contentType string) metadata.MD {
	out := make(metadata.MD, len(md)+1)
	for k, v := range md {
		if len(v) > 0 && !reservedKey(k) {
			out[k] = append([]string(nil), v...)
		}
	}
	if contentType != "" {
		out["content-type"] = []string{contentType}
	}
	return out
}

// wireError is why grpc-go's client fails a call whose server sent md, a
// header or trailer, or nil if md crosses. grpc-go's server checks
// nothing of what grpc.SetHeader, grpc.SendHeader, grpc.SetTrailer and
// ServerStream.SetTrailer give it, and writes a header field for each
// value of each key but the reserved ones, -bin values base64-encoded
// (http2_server.go appendHeaderFieldsFromMD). Its client's HTTP/2 framer
// refuses a block with a field name that is not a lower-case token, or a
// value with a control character other than tab (x/net/http2
// readMetaFrame); bytes from 0x80 pass. The client then fails the call
// with Internal and resets the stream.
func wireError(md metadata.MD) error {
	if len(md) == 0 {
		return nil // most calls': small enough to inline, it costs no call
	}
	return wireFieldError(md)
}

// wireFieldError is wireError of md, which is not empty.
func wireFieldError(md metadata.MD) error {
	for k, vs := range md {
		if len(vs) == 0 || reservedKey(k) {
			continue
		}
		if !wireName(k) {
			return status.Errorf(codes.Internal, "invalid header field name %q", k)
		}
		if strings.HasSuffix(k, "-bin") {
			continue
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return status.Errorf(codes.Internal, "invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// wireName reports whether HTTP/2 allows k as a field name: a token
// without upper case (x/net/http2 validWireHeaderFieldName).
func wireName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !httpguts.IsTokenRune(rune(c)) || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// headerError is why the client fails at the header, which it receives
// only once headerOut is raised: its framer refused it (see wireError).
func (c *call) headerError() error {
	if !c.headerBad {
		return nil
	}
	return wireError(c.header)
}

// arrives is what reaches the client of err, the status the handler's
// side sent with trailer after the header: the status as the client
// takes it (see wireStatus), and whether the trailer arrived (see
// trailerFails).
func (c *call) arrives(err error, trailer metadata.MD) (error, bool) {
	if err == nil && len(trailer) == 0 && !c.headerBad && !c.reset {
		return nil, true // most calls': an OK status alone crosses as it is
	}
	if ferr := c.trailerFails(err, trailer); ferr != nil {
		return ferr, false
	}
	return wireStatus(err, trailer), true
}

// trailerFails is why the trailer sent with err never reaches the
// client, which fails the call with it in place of the status, or nil
// if it arrives: a header the client refused (headerError) failed the
// call before it, a reset stream (see refusedRequest) ends with err and
// nothing else, and the client may refuse the trailer (trailerError).
func (c *call) trailerFails(err error, trailer metadata.MD) error {
	switch {
	case c.headerBad:
		return c.headerError()
	case c.reset:
		return err
	}
	return trailerError(err, trailer)
}

// trailerError is why grpc-go's client fails a call whose server sent
// the status err with trailer, without the trailer, or nil if they
// cross: its framer refuses a field (see wireError), or it cannot parse
// the grpc-status, which it reads as a signed 32-bit number
// (http2_client.go operateHeaders), and the server writes a code at or
// above 2^31 as it is.
func trailerError(err error, trailer metadata.MD) error {
	if werr := wireError(trailer); werr != nil {
		return werr
	}
	if err == nil {
		return nil
	}
	if code := status.Code(err); code > math.MaxInt32 {
		_, perr := strconv.ParseInt(strconv.FormatUint(uint64(code), 10), 10, 32)
		return status.Errorf(codes.Unknown, "transport: malformed grpc-status: %v", perr)
	}
	return nil
}

// wireStatus is the status grpc-go's client takes from what its server
// writes of err (nil: OK) with trailer (http2_server.go writeStatus,
// http2_client.go operateHeaders): the code; the message, percent-encoded
// and decoded back (see wireMessage); and grpc-status-details-bin. The
// server fills that key with the status if it has details and protobuf
// encodes it (it refuses a string that is not UTF-8, the message or a
// detail's type URL: then no details cross, and the client gets the code
// and the message alone), and otherwise sends what the handler left
// there. From a single value of it that decodes as a google.rpc.Status,
// the client takes the whole status, message and details, if its code is
// the one sent, and fails the call with Internal if not (internal/status
// NewWithProto).
func wireStatus(err error, trailer metadata.MD) error {
	bins := trailer[statusDetailsKey]
	if err == nil && bins == nil {
		return nil
	}
	st, _ := status.FromError(err)
	code, msg := st.Code(), st.Message()
	if p := st.Proto(); len(p.GetDetails()) > 0 {
		if _, merr := proto.Marshal(p); merr == nil {
			return err // the client decodes the very status
		}
		// The server sends no details, nor the handler's: the code
		// and the message cross alone.
		return status.New(code, wireMessage(msg)).Err()
	}
	if len(bins) == 1 {
		var sp spb.Status
		if proto.Unmarshal([]byte(bins[0]), &sp) == nil {
			if codes.Code(sp.Code) != code {
				return status.Errorf(codes.Internal, "grpc-status-details-bin mismatch: grpc-status=%v, grpc-message=%q, grpc-status-details-bin=%+v", code, wireMessage(msg), &sp)
			}
			return status.FromProto(&sp).Err()
		}
	}
	if utf8.ValidString(msg) {
		return err
	}
	return status.New(code, wireMessage(msg)).Err()
}

// wireMessage is a status message as grpc-go's client gets it back from
// the grpc-message header (http_util.go encodeGrpcMessage,
// decodeGrpcMessage): UTF-8 as it was, and each byte of what is not UTF-8
// as U+FFFD, whose encoding is what the encoder writes for the
// utf8.RuneError it decodes there.
func wireMessage(msg string) string {
	if utf8.ValidString(msg) {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg) + 16)
	for len(msg) > 0 {
		r, size := utf8.DecodeRuneInString(msg)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(msg[:size])
		}
		msg = msg[size:]
	}
	return b.String()
}

// clientHeader is the header as the client receives it: none if the call
// ended with trailers only, or if the client refused it (headerError).
// c.mu is held, or the status is out.
func (c *call) clientHeader() metadata.MD {
	if c.trailersOnly || c.headerBad {
		return nil
	}
	return toResponse(c.header, c.info.contentType())
}

// clientTrailer is trailer as the client receives it with the status
// err: a response of trailers only carries the content-type there, and a
// status with details its encoding, in place of any the handler set (or
// none, where protobuf cannot encode it), as grpc-go's server writes them.
func (c *call) clientTrailer(trailer metadata.MD, err error) metadata.MD {
	contentType := ""
	if c.trailersOnly {
		contentType = c.info.contentType()
	}
	md := toResponse(trailer, contentType)
	if st, ok := status.FromError(err); ok && len(st.Proto().GetDetails()) > 0 {
		delete(md, statusDetailsKey) // even if none replaces it
		if b, err := proto.Marshal(st.Proto()); err == nil {
			md[statusDetailsKey] = []string{string(b)}
		}
	}
	return md
}

// statusDetailsKey is the trailer key of a status with details, encoded.
const statusDetailsKey = "grpc-status-details-bin"
