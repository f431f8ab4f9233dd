package inprochttp

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestHPACKFieldLen: hpackFieldLen is what hpack's encoder writes of a
// field it has not sent before, for names and values of every byte and
// lengths about where an HPACK integer takes another byte.
func TestHPACKFieldLen(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randomBytes := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	var values []string
	for _, n := range []int{0, 1, 125, 126, 127, 128, 253, 254, 255, 256, 16509, 16510, 16511, 16512, 70000} {
		values = append(values, strings.Repeat("&", n), strings.Repeat("a", n), strings.Repeat("{", n), randomBytes(n))
	}
	for _, name := range []string{"X-Mixed-Case", "x-t", strings.Repeat("N", 130), "Grpc-Status-Details-Bin"} {
		for _, value := range values {
			var buf bytes.Buffer
			hpack.NewEncoder(&buf).WriteField(hpack.HeaderField{Name: strings.ToLower(name), Value: value})
			if got, _, _ := hpackFieldLen(name, value); got != buf.Len() {
				t.Errorf("%q with a value of %d bytes %.10q: %d bytes, hpack writes %d", name, len(value), value, got, buf.Len())
			}
		}
	}
}
