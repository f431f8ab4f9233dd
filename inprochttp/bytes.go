package inprochttp

// A byteSet is a set of ASCII bytes: the bytes a method, a header field
// name or a Host may hold.
type byteSet [128]bool

// newByteSet is the set of letters, digits and the bytes of punct.
func newByteSet(punct string) (t byteSet) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range punct {
		t[c] = true
	}
	return t
}

// holds reports whether every byte of s is in t.
func (t *byteSet) holds(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || !t[c] {
			return false
		}
	}
	return true
}

var (
	// tokenBytes are the bytes of an RFC 9110 token.
	tokenBytes = newByteSet("!#$%&'*+-.^_`|~")
	// hostBytes are the bytes of a Host as net/http's client checks it:
	// those of a host, a port, an IPv6 literal with its zone, no more.
	hostBytes = newByteSet("!$%&'()*+,-.:;=[]_~")
)

// isToken reports whether s is a non-empty RFC 9110 token, as methods and
// header field names must be.
func isToken(s string) bool { return s != "" && tokenBytes.holds(s) }

// validHost reports whether h may be a Host, as net/http's client checks
// it.
func validHost(h string) bool { return hostBytes.holds(h) }
