package inprochttp

import (
	"strings"

	"golang.org/x/net/http2/hpack"
)

// HPACK (RFC 7541) is how HTTP/2 sends a header list. What a list costs
// on the wire decides how net/http's HTTP/2 client takes a response's
// trailers over its bound (see cutTrailers). net/http's server sends a
// field it has not sent before as a literal with a new name, each string
// Huffman-coded where that is shorter (hpack.Encoder.WriteField); the
// sizes here are those, without HPACK's tables, whose indexes send a
// field or a name sent before in fewer bytes. No field costs net/http's
// server more than its size here.

// hpackFieldLen is how many bytes HPACK takes to send a field named name
// with value as a literal with a new name: a byte that says so, then the
// name, in lower case as HTTP/2 sends it, and the value, each with its
// length; and the length of each of the two strings without its length.
func hpackFieldLen(name, value string) (n int, nameLen, valueLen int) {
	nameLen, valueLen = hpackStringLen(name, true), hpackStringLen(value, false)
	return 1 + varIntLen(7, nameLen) + nameLen + varIntLen(7, valueLen) + valueLen, nameLen, valueLen
}

// hpackStringLen is how many bytes HPACK takes to send s, but for its
// length: its Huffman code if that is shorter, as net/http's encoder
// chooses (appendHpackString), or s. lower takes s's ASCII letters in
// lower case, as HTTP/2 sends a name.
func hpackStringLen(s string, lower bool) int {
	if lower {
		s = strings.ToLower(s) // a copy only if s has an upper-case letter
	}
	return int(min(hpack.HuffmanEncodeLength(s), uint64(len(s))))
}

// varIntLen is how many bytes HPACK takes to send the integer i with a
// prefix of prefix bits (RFC 7541, section 5.1).
func varIntLen(prefix uint, i int) int {
	k := 1<<prefix - 1
	if i < k {
		return 1
	}
	n := 2
	for i -= k; i >= 128; i >>= 7 {
		n++
	}
	return n
}
