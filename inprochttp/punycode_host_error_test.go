package inprochttp_test

import (
	"net/http"
	"strings"
	"testing"
)

// A Host that cannot be put in punycode fails the request, as net/http's
// client fails it, and the error names that Host, as the client gave it.
func TestPunycodeHostErrorNamesHost(t *testing.T) {
	const host = "ü.xn--ab-" // its second label decodes to ASCII: not punycode
	forEach(t, func(t *testing.T, tr transport) {
		hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("the handler got a request for %q", r.Host)
		}))
		req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
		req.Host = host
		_, err := hc.Do(req)
		switch {
		case err == nil:
			t.Fatal("the request succeeded")
		case tr.name == "inproc" && !strings.Contains(err.Error(), host):
			t.Errorf("the error does not name the Host %q: %v", host, err)
		}
	})
}
