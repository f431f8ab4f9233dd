package inprochttp

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
// lower case.
func hpackStringLen(s string, lower bool) int {
	bits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if lower {
			c = lowerASCII(c)
		}
		bits += int(huffmanCodeLen[c])
	}
	return min((bits+7)/8, len(s))
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

// huffmanCodeLen is the length in bits of each byte's code in HPACK's
// Huffman code (RFC 7541, Appendix B).
var huffmanCodeLen = [256]uint8{
	13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
	28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
	6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
	5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
	13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
	15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
	6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
	20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
	24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
	22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
	21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
	26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
	19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
	20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
	26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
}
