package inprochttp_test

// attack5: header limits, found by bisection. For each request (and
// response) shape, the largest padding that still gets through is found
// against net/http's HTTP/2 server and client over a unix socket (h2c,
// the oracle) and in-process; the two must agree to the byte.

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// a5Largest is the largest n in [lo, hi] for which ok(n), assuming ok is
// true up to some point and false after; lo-1 if none.
func a5Largest(lo, hi int, ok func(n int) bool) int {
	if !ok(lo) {
		return lo - 1
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func TestAttack5RequestHeaderLimitShapes(t *testing.T) {
	const maxHeaderBytes = 1000 // bound: 1320
	shapes := map[string]func(req *http.Request){
		"plain":        func(req *http.Request) {},
		"multi-values": func(req *http.Request) { req.Header["X-Multi"] = []string{"1", "22", "333", ""} },
		"lower-key":    func(req *http.Request) { req.Header["x-lower"] = []string{"v"}; req.Header["X-Lower"] = []string{"w"} },
		"long-host":    func(req *http.Request) { req.Host = "h" + strings.Repeat("o", 100) + "st" },
		"long-path": func(req *http.Request) {
			req.URL.Path = "/" + strings.Repeat("p", 200)
			req.URL.RawQuery = "q=" + strings.Repeat("q", 50)
		},
		"method": func(req *http.Request) { req.Method = "PROPFIND" },
		"conn-fields": func(req *http.Request) {
			req.Header.Set("Connection", "close")
			req.Header.Set("Keep-Alive", "timeout=5")
			req.Header.Set("Proxy-Connection", "keep-alive")
		},
		"host-in-header":    func(req *http.Request) { req.Header.Set("Host", "other.example") },
		"empty-ua":          func(req *http.Request) { req.Header.Set("User-Agent", "") },
		"two-ua":            func(req *http.Request) { req.Header["User-Agent"] = []string{"a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"} },
		"cookie-semicolons": func(req *http.Request) { req.Header.Set("Cookie", "a=1;; b=2 ;c=3;") },
		"two-cookie-fields": func(req *http.Request) { req.Header["Cookie"] = []string{"a=1; b=2", "c=3"} },
		"empty-cookie":      func(req *http.Request) { req.Header["Cookie"] = []string{"", "a=1"} },
		"te-trailers":       func(req *http.Request) { req.Header.Set("Te", "trailers") },
		"accept-encoding":   func(req *http.Request) { req.Header.Set("Accept-Encoding", "gzip, br") },
		"value-spaces":      func(req *http.Request) { req.Header.Set("X-Sp", "  v  ") },
		"content-length": func(req *http.Request) {
			req.Method = http.MethodPost
			req.Body = io.NopCloser(strings.NewReader("hello"))
			req.ContentLength = 5
		},
		"chunked-body": func(req *http.Request) {
			req.Method = http.MethodPost
			req.Body = io.NopCloser(strings.NewReader("hello"))
			req.ContentLength = -1
		},
		"trailer-declared": func(req *http.Request) {
			req.Method = http.MethodPost
			req.Body = io.NopCloser(strings.NewReader("hello"))
			req.ContentLength = -1
			req.Trailer = http.Header{"X-Tr": nil, "X-Tr2": nil}
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			checkLargestPad(t, maxHeaderBytes, shape)
		})
	}
}

func TestAttack5ResponseHeaderLimitShapes(t *testing.T) {
	const maxResponse = 1000 // bound: 1320
	shapes := map[string]func(w http.ResponseWriter){
		// no-date: the handler sets no Date. net/http's server adds one and
		// its client counts it; in-process there is none (the doc says
		// so), and the client takes 65 bytes more of head.
		"no-date":     func(w http.ResponseWriter) {},
		"set-date":    func(w http.ResponseWriter) {},
		"multi-value": func(w http.ResponseWriter) { w.Header()["X-M"] = []string{"1", "22", ""} },
		"lower-key": func(w http.ResponseWriter) {
			w.Header()["x-lower"] = []string{"v"}
			w.Header()["X-Lower"] = []string{"w"}
		},
		"set-cookies":   func(w http.ResponseWriter) { w.Header()["Set-Cookie"] = []string{"a=1", "b=2; Path=/"} },
		"content-type":  func(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/json") },
		"written-body":  func(w http.ResponseWriter) { w.Write([]byte("hello")) },
		"html-sniffed":  func(w http.ResponseWriter) { w.Write([]byte("<html><body>x</body></html>")) },
		"content-len":   func(w http.ResponseWriter) { w.Header().Set("Content-Length", "5"); w.Write([]byte("hello")) },
		"status-404":    func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) },
		"flushed":       func(w http.ResponseWriter) { w.(http.Flusher).Flush() },
		"trailer":       func(w http.ResponseWriter) { w.Header().Set("Trailer", "X-T, X-U") },
		"conn-fields":   func(w http.ResponseWriter) { w.Header().Set("Connection", "close"); w.Header().Set("Keep-Alive", "x") },
		"empty-value":   func(w http.ResponseWriter) { w.Header()["X-E"] = []string{""} },
		"value-spaces":  func(w http.ResponseWriter) { w.Header().Set("X-Sp", "  v  ") },
		"te-chunked":    func(w http.ResponseWriter) { w.Header().Set("Transfer-Encoding", "chunked") },
		"no-ctype-head": func(w http.ResponseWriter) { w.Header()["Content-Type"] = nil },
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			var res [2]int
			for i, tr := range transports {
				var n int
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/x" {
						return
					}
					w.Header().Set("X-Pad", strings.Repeat("p", n))
					if name != "no-date" {
						// net/http's server adds a Date (65 bytes as HTTP/2
						// counts it) unless the handler sets one; in-process
						// has none (documented). Set, it crosses both.
						w.Header().Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
					}
					shape(w)
				}), headerLimits{response: maxResponse})
				warm(t, hc, base)
				res[i] = a5Largest(0, 3000, func(nn int) bool {
					n = nn
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/x", nil)
					resp, err := hc.Do(req)
					if err != nil {
						return false
					}
					drain(resp.Body)
					return true
				})
			}
			if res[0] != res[1] {
				t.Errorf("largest X-Pad the client took: inproc %d, net/http h2c (oracle) %d", res[0], res[1])
			}
		})
	}
}

// checkLargestPad finds, on each transport with a request-header limit of
// limit, the largest X-Pad that a GET shaped by shape still gets served
// with, and fails t where inproc's differs from net/http's (the oracle).
func checkLargestPad(t *testing.T, limit int, shape func(*http.Request)) {
	t.Helper()
	var res [2]int
	for i, tr := range transports {
		ran := make(chan struct{}, 1)
		hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/warm" {
				select {
				case ran <- struct{}{}:
				default:
				}
			}
			io.Copy(io.Discard, r.Body)
		}), headerLimits{header: limit})
		warm(t, hc, base)
		res[i] = a5Largest(0, 3000, func(n int) bool {
			select {
			case <-ran:
			default:
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/x", nil)
			shape(req)
			req.Header.Set("X-Pad", strings.Repeat("p", n))
			resp, err := hc.Do(req)
			if err == nil {
				drain(resp.Body)
			}
			return len(ran) > 0 && err == nil && resp.StatusCode == http.StatusOK
		})
	}
	if res[0] != res[1] {
		t.Errorf("largest X-Pad served: inproc %d, net/http h2c (oracle) %d", res[0], res[1])
	}
}
