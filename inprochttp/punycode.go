package inprochttp

import (
	"errors"
	"math"
	"net"
	"strings"
	"unicode/utf8"
)

// An internationalized host crosses in punycode, as net/http's client
// sends it (httpguts.PunycodeHostPort). net/http uses golang.org/x/net/idna
// for that, which this module does not require: what it does there is
// its Punycode profile, RFC 3492's encoding of each non-ASCII label with
// no mapping or validation beyond it, which is small enough to do here.

// punycodeHostPort returns the host, or host:port, v with its non-ASCII
// labels in punycode.
func punycodeHostPort(v string) (string, error) {
	if isASCII(v) {
		return v, nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		host, port = v, "" // no port
	}
	if host, err = hostToASCII(host); err != nil {
		return "", err
	}
	if port == "" {
		return host, nil
	}
	return net.JoinHostPort(host, port), nil
}

// acePrefix starts a label in punycode.
const acePrefix = "xn--"

// errPunycode is why a host cannot be put in punycode.
var errPunycode = errors.New("invalid label in punycode")

// hostToASCII puts each non-ASCII label of host in punycode, as idna's
// Punycode profile does: a label already in punycode must decode, to
// something not ASCII.
func hostToASCII(host string) (string, error) {
	labels := strings.Split(host, ".")
	for i, label := range labels {
		if enc, ok := strings.CutPrefix(label, acePrefix); ok {
			u, err := punyDecode(enc)
			if err != nil || (u != "" && isASCII(u)) {
				return "", errPunycode
			}
			label = u
		}
		if !isASCII(label) {
			var err error
			if label, err = punyEncode(label); err != nil {
				return "", err
			}
		}
		labels[i] = label
	}
	return strings.Join(labels, "."), nil
}

// isASCII reports whether s is ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// RFC 3492's parameters (section 5), in int32 as idna computes them, so
// that overflows are the same.
const (
	punyBase        int32 = 36
	punyDamp        int32 = 700
	punyInitialBias int32 = 72
	punyInitialN    int32 = 128
	punySkew        int32 = 38
	punyTmax        int32 = 26
	punyTmin        int32 = 1
)

// punyEncode is s in punycode, with acePrefix (RFC 3492, section 6.3),
// failing where idna's encoder overflows.
func punyEncode(s string) (string, error) {
	out := []byte(acePrefix)
	delta, n, bias := int32(0), punyInitialN, punyInitialBias
	b, remaining := int32(0), int32(0)
	for _, r := range s {
		if r < utf8.RuneSelf {
			b++
			out = append(out, byte(r))
		} else {
			remaining++
		}
	}
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	for remaining != 0 {
		m := int32(math.MaxInt32)
		for _, r := range s {
			if m > r && r >= n {
				m = r
			}
		}
		var overflow bool
		if delta, overflow = punyMulAdd(delta, m-n, h+1); overflow {
			return "", errPunycode
		}
		n = m
		for _, r := range s {
			if r < n {
				if delta++; delta < 0 {
					return "", errPunycode
				}
				continue
			}
			if r > n {
				continue
			}
			q := delta
			for k := punyBase; ; k += punyBase {
				t := punyThreshold(k, bias)
				if q < t {
					break
				}
				out = append(out, punyDigit(t+(q-t)%(punyBase-t)))
				q = (q - t) / (punyBase - t)
			}
			out = append(out, punyDigit(q))
			bias = punyAdapt(delta, h+1, h == b)
			delta = 0
			h++
			remaining--
		}
		delta++
		n++
	}
	return string(out), nil
}

// punyDecode decodes a label in punycode, without its prefix (RFC 3492,
// section 6.2), failing as idna's decoder does.
func punyDecode(enc string) (string, error) {
	if enc == "" {
		return "", nil
	}
	pos := 1 + strings.LastIndex(enc, "-")
	if pos == 1 {
		return "", errPunycode
	}
	if pos == len(enc) {
		return enc[:len(enc)-1], nil
	}
	out := make([]rune, 0, len(enc))
	if pos != 0 {
		for _, r := range enc[:pos-1] {
			out = append(out, r)
		}
	}
	i, n, bias := int32(0), punyInitialN, punyInitialBias
	for pos < len(enc) {
		oldI, w := i, int32(1)
		for k := punyBase; ; k += punyBase {
			if pos == len(enc) {
				return "", errPunycode
			}
			digit, ok := punyDigitValue(enc[pos])
			if !ok {
				return "", errPunycode
			}
			pos++
			var overflow bool
			if i, overflow = punyMulAdd(i, digit, w); overflow {
				return "", errPunycode
			}
			t := punyThreshold(k, bias)
			if digit < t {
				break
			}
			if w, overflow = punyMulAdd(0, w, punyBase-t); overflow {
				return "", errPunycode
			}
		}
		if len(out) >= 1024 {
			return "", errPunycode
		}
		x := int32(len(out) + 1)
		bias = punyAdapt(i-oldI, x, oldI == 0)
		n += i / x
		i %= x
		if n < 0 || n > utf8.MaxRune {
			return "", errPunycode
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = n
		i++
	}
	return string(out), nil
}

// punyThreshold is t for the digit at k (RFC 3492, section 6.2).
func punyThreshold(k, bias int32) int32 {
	switch {
	case k <= bias:
		return punyTmin
	case k >= bias+punyTmax:
		return punyTmax
	}
	return k - bias
}

// punyMulAdd is a + b*c, and whether it overflows an int32.
func punyMulAdd(a, b, c int32) (int32, bool) {
	p := int64(b) * int64(c)
	if p > math.MaxInt32-int64(a) {
		return 0, true
	}
	return a + int32(p), false
}

// punyDigit is the digit d, 0 to 35.
func punyDigit(d int32) byte {
	if d < 26 {
		return byte(d + 'a')
	}
	return byte(d - 26 + '0')
}

// punyDigitValue is the value of the digit x, in either case.
func punyDigitValue(x byte) (int32, bool) {
	switch {
	case '0' <= x && x <= '9':
		return int32(x-'0') + 26, true
	case 'A' <= x && x <= 'Z':
		return int32(x - 'A'), true
	case 'a' <= x && x <= 'z':
		return int32(x - 'a'), true
	}
	return 0, false
}

// punyAdapt is RFC 3492's bias adaptation (section 6.1).
func punyAdapt(delta, numPoints int32, first bool) int32 {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := int32(0)
	for delta > ((punyBase-punyTmin)*punyTmax)/2 {
		delta /= punyBase - punyTmin
		k += punyBase
	}
	return k + (punyBase-punyTmin+1)*delta/(delta+punySkew)
}
