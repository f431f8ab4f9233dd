package inprochttp_test

// attack8: header lists at, one under and one over the limits, in shapes
// attack5/6 left out (many small fields, upper-case keys, cold
// connections), and response heads whose Date is set in odd ways
// ("DATE", mixed case pairs, an empty first value). Side by side with
// net/http's HTTP/2 server and client over a unix socket (h2c, oracle).

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestAttack8RequestHeaderLimitMoreShapes(t *testing.T) {
	const maxHeaderBytes = 1000
	shapes := map[string]func(req *http.Request){
		"upper-key": func(req *http.Request) { req.Header["X-UPPER"] = []string{"v"} },
		"many-small-fields": func(req *http.Request) {
			for i := range 20 {
				req.Header.Set(fmt.Sprintf("X-F%02d", i), "v")
			}
		},
		"many-values-one-key": func(req *http.Request) {
			req.Header["X-Many"] = []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		},
		"empty-values": func(req *http.Request) {
			req.Header["X-E1"] = []string{""}
			req.Header["X-E2"] = []string{"", ""}
		},
		"many-cookies": func(req *http.Request) {
			req.Header.Set("Cookie", "a=1; b=2; c=3; d=4; e=5; f=6; g=7; h=8")
		},
		"date-in-request": func(req *http.Request) {
			req.Header["DATE"] = []string{"x"}
			req.Header["Date"] = []string{"", "y"}
		},
	}
	for _, name := range slices.Sorted(mapsKeys(shapes)) {
		t.Run(name, func(t *testing.T) {
			checkLargestPad(t, maxHeaderBytes, shapes[name])
		})
	}
}

// At the limit, one byte under and one over, exactly: the GET's list is
// :authority localhost, :method GET, :path /x, :scheme http,
// user-agent Go-http-client/2.0 and x-pad. With the warm connection the
// oracle's client knows the limit.
func TestAttack8RequestHeaderExactLimit(t *testing.T) {
	const maxHeaderBytes = 1000
	bound := maxHeaderBytes + 320
	fixed := fieldsSize(":authority", "localhost", ":method", "GET", ":path", "/x", ":scheme", "http",
		"user-agent", "Go-http-client/2.0") + fieldsSize("x-pad", "")
	atLimit := bound - fixed
	for _, d := range []int{-1, 0, 1} {
		n := atLimit + d
		t.Run(fmt.Sprintf("pad%+d", d), func(t *testing.T) {
			var got [2]string
			for i, tr := range transports {
				ran := false
				hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/x" {
						ran = true
					}
				}), headerLimits{header: maxHeaderBytes})
				warm(t, hc, base)
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/x", nil)
				req.Header.Set("X-Pad", strings.Repeat("p", n))
				resp, err := hc.Do(req)
				if err != nil {
					got[i] = fmt.Sprintf("error ran=%v", ran)
				} else {
					drain(resp.Body)
					got[i] = fmt.Sprintf("%d ran=%v", resp.StatusCode, ran)
				}
			}
			t.Logf("pad %d: inproc %q, oracle %q", n, got[0], got[1])
			if got[0] != got[1] {
				t.Errorf("pad %d (limit %+d): inproc %q, net/http h2c (oracle) %q", n, d, got[0], got[1])
			}
			if d <= 0 && got[1] != "200 ran=true" {
				t.Errorf("oracle refused a list within the bound: %q", got[1])
			}
		})
	}
}

// Odd Date fields in a response head, at the limit's edge.
func TestAttack8ResponseHeadOddDate(t *testing.T) {
	const good = "Mon, 02 Jan 2006 15:04:05 GMT"
	shapes := map[string]func(w http.ResponseWriter, pad string){
		"DATE-upper": func(w http.ResponseWriter, pad string) {
			w.Header()["DATE"] = []string{good}
			w.Header().Set("X-Pad", pad)
		},
		"DATE-upper-empty": func(w http.ResponseWriter, pad string) {
			w.Header()["DATE"] = []string{""}
			w.Header().Set("X-Pad", pad)
		},
		"DATE-and-Date": func(w http.ResponseWriter, pad string) {
			w.Header()["DATE"] = []string{"x"}
			w.Header()["Date"] = []string{good}
			w.Header().Set("X-Pad", pad)
		},
		"DATE-and-Date-nil": func(w http.ResponseWriter, pad string) {
			w.Header()["DATE"] = []string{"x"}
			w.Header()["Date"] = nil
			w.Header().Set("X-Pad", pad)
		},
		"date-two-first-empty": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{"", good}
			w.Header().Set("X-Pad", pad)
		},
		"date-two-empty": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{"", ""}
			w.Header().Set("X-Pad", pad)
		},
		"date-two-good": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{good, good}
			w.Header().Set("X-Pad", pad)
		},
		"date-empty-with-trailer": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{""}
			w.Header().Set("Trailer", "X-T")
			w.Header().Set("X-Pad", pad)
			w.Write([]byte("b"))
			w.Header().Set("X-T", "t")
		},
		"date-empty-flushed": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{""}
			w.Header().Set("X-Pad", pad)
			w.(http.Flusher).Flush()
		},
		"no-date-status-500": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusInternalServerError)
		},
		"DATE-upper-304": func(w http.ResponseWriter, pad string) {
			w.Header()["DATE"] = []string{"x"}
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusNotModified)
		},
		"http.Error-no-date": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			http.Error(w, "oops", http.StatusBadRequest)
		},
	}
	for _, name := range slices.Sorted(mapsKeys(shapes)) {
		t.Run(name, func(t *testing.T) {
			res := a6Largest(t, false, shapes[name], nil)
			if res[0] != res[1] {
				t.Errorf("largest X-Pad the client took: inproc %d, net/http h2c (oracle) %d", res[0], res[1])
			}
		})
	}
}

// What the client sees of the odd Date fields, well under the limit.
func TestAttack8ResponseOddDateSeen(t *testing.T) {
	shapes := map[string]func(w http.ResponseWriter){
		"DATE-upper":           func(w http.ResponseWriter) { w.Header()["DATE"] = []string{"x"} },
		"date-empty":           func(w http.ResponseWriter) { w.Header()["Date"] = []string{""} },
		"date-two-first-empty": func(w http.ResponseWriter) { w.Header()["Date"] = []string{"", "y"} },
	}
	for _, name := range slices.Sorted(mapsKeys(shapes)) {
		t.Run(name, func(t *testing.T) {
			var got [2]string
			for i, tr := range transports {
				hc, base := tr.client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { shapes[name](w) }))
				resp, err := hc.Get(base + "/x")
				if err != nil {
					t.Fatal(err)
				}
				drain(resp.Body)
				vals := resp.Header.Values("Date")
				if len(vals) == 1 && len(vals[0]) == len("Mon, 02 Jan 2006 15:04:05 GMT") && vals[0] != "Mon, 02 Jan 2006 15:04:05 GMT" {
					vals = []string{"<server date>"}
				}
				got[i] = fmt.Sprintf("%q", vals)
			}
			t.Logf("inproc %s, oracle %s", got[0], got[1])
		})
	}
}
