package shmwire

import (
	"encoding/binary"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

// Request is the payload of a client's Headers frame: it opens a call.
type Request struct {
	Method  string        // "/package.Service/Method"
	Unary   bool          // made through Invoke: one message each way
	Timeout time.Duration // 0 for none; what is left of the client's deadline
	Subtype string        // the content subtype: "" for proto
	MD      metadata.MD
}

// Append appends r's payload to b.
func (r *Request) Append(b []byte) []byte {
	b = appendString(b, r.Method)
	kind := uint64(0)
	if r.Unary {
		kind = 1
	}
	b = binary.AppendUvarint(b, kind)
	b = binary.AppendUvarint(b, uint64(max(r.Timeout, 0)))
	b = appendString(b, r.Subtype)
	return appendMD(b, r.MD)
}

// ParseRequest parses a client's Headers payload.
func ParseRequest(p []byte) (Request, error) {
	d := decoder{p: p, what: "request headers"}
	r := Request{Method: d.string()}
	switch kind := d.uvarint(); kind {
	case 0:
	case 1:
		r.Unary = true
	default:
		d.fail("call kind %d", kind)
	}
	timeout := d.uvarint()
	if timeout > uint64(maxDuration) {
		d.fail("timeout of %d ns", timeout)
	}
	r.Timeout = time.Duration(timeout)
	r.Subtype = d.string()
	r.MD = d.md()
	return r, d.done()
}

const maxDuration = time.Duration(1<<63 - 1)

// AppendMD appends the payload of a server's Headers frame: its response
// header metadata.
func AppendMD(b []byte, md metadata.MD) []byte { return appendMD(b, md) }

// AppendMDWithout is AppendMD without the key skip: metadata a transport
// of the receiver's adds again.
func AppendMDWithout(b []byte, md metadata.MD, skip string) []byte {
	return appendMDWithout(b, md, skip)
}

// ParseMD parses a server's Headers payload.
func ParseMD(p []byte) (metadata.MD, error) {
	d := decoder{p: p, what: "response headers"}
	md := d.md()
	return md, d.done()
}

// Status is the payload of a Trailers frame.
type Status struct {
	Code    codes.Code
	Message string
	// Details is a google.rpc.Status in its wire form, with the code and
	// message above, when the status has details; otherwise empty.
	Details []byte
	MD      metadata.MD
	Skip    string // a key of MD Append leaves out
}

// Append appends s's payload to b.
func (s *Status) Append(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s.Code))
	b = appendString(b, s.Message)
	b = appendBytes(b, s.Details)
	return appendMDWithout(b, s.MD, s.Skip)
}

// ParseStatus parses a Trailers payload.
func ParseStatus(p []byte) (Status, error) {
	d := decoder{p: p, what: "trailers"}
	code := d.uvarint()
	if code > 1<<32-1 {
		d.fail("status code %d", code)
	}
	s := Status{Code: codes.Code(code), Message: d.string()}
	if details := d.bytes(); len(details) > 0 {
		s.Details = append([]byte(nil), details...)
	}
	s.MD = d.md()
	return s, d.done()
}

// AppendCode appends the payload of a Cancel frame.
func AppendCode(b []byte, c codes.Code) []byte { return binary.AppendUvarint(b, uint64(c)) }

// ParseCode parses a Cancel payload.
func ParseCode(p []byte) (codes.Code, error) {
	d := decoder{p: p, what: "cancel"}
	c := d.uvarint()
	if c > 1<<32-1 {
		d.fail("code %d", c)
	}
	return codes.Code(c), d.done()
}

// AppendWindow appends the payload of a Window frame.
func AppendWindow(b []byte, increment uint32) []byte {
	return binary.AppendUvarint(b, uint64(increment))
}

// ParseWindow parses a Window payload: an increment of at least 1.
func ParseWindow(p []byte) (uint32, error) {
	d := decoder{p: p, what: "window"}
	n := d.uvarint()
	if n == 0 || n > 1<<31-1 {
		d.fail("window increment %d", n)
	}
	return uint32(n), d.done()
}

// Away is the payload of a GoAway frame.
type Away struct {
	Last   uint32 // the highest stream id the sender took
	Reason string
}

// Append appends a's payload to b.
func (a *Away) Append(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(a.Last))
	return appendString(b, a.Reason)
}

// ParseAway parses a GoAway payload.
func ParseAway(p []byte) (Away, error) {
	d := decoder{p: p, what: "goaway"}
	last := d.uvarint()
	if last > 1<<32-1 {
		d.fail("last stream %d", last)
	}
	a := Away{Last: uint32(last), Reason: d.string()}
	return a, d.done()
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// appendMD writes the number of values, then each key and value. A key's
// values stay in order; -bin values go as bytes, not base64.
func appendMD(b []byte, md metadata.MD) []byte { return appendMDWithout(b, md, "") }

func appendMDWithout(b []byte, md metadata.MD, skip string) []byte {
	n := 0
	for k, vs := range md {
		if k != skip || skip == "" {
			n += len(vs)
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for k, vs := range md {
		if k == skip && skip != "" {
			continue
		}
		for _, v := range vs {
			b = appendString(b, k)
			b = appendString(b, v)
		}
	}
	return b
}

// decoder reads a payload a peer wrote. The first problem sticks: later
// reads return zero values, and done reports it.
type decoder struct {
	p    []byte
	what string
	err  error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("shmwire: "+d.what+": "+format, args...)
	}
	d.p = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.fail("bad or truncated varint")
		return 0
	}
	d.p = d.p[n:]
	return v
}

// bytes returns the next length-prefixed bytes, aliasing the payload.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		d.fail("a length of %d with %d bytes left", n, len(d.p))
		return nil
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) md() metadata.MD {
	n := d.uvarint()
	// Every value takes at least two bytes: a count the payload cannot
	// hold is refused before anything is allocated for it.
	if n > uint64(len(d.p))/2 {
		d.fail("%d metadata values in %d bytes", n, len(d.p))
		return nil
	}
	if n == 0 {
		return nil
	}
	md := make(metadata.MD, min(n, 16))
	for range n {
		k, v := d.bytes(), d.string()
		if d.err != nil {
			return nil
		}
		if !validKey(k) {
			d.fail("metadata key %q", k)
			return nil
		}
		key := string(k)
		md[key] = append(md[key], v)
	}
	return md
}

// validKey says whether k is a metadata key as gRPC allows it: lower case
// letters, digits, '-', '_' and '.'. Values are not checked here: what a
// handler may receive is the server's call.
func validKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func (d *decoder) done() error {
	if d.err == nil && len(d.p) > 0 {
		d.fail("%d bytes left over", len(d.p))
	}
	return d.err
}
