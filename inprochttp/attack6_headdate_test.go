package inprochttp_test

// attack6: response head limits around the Date field, 1xx heads near
// the limit, and trailers near the limit. For each shape the largest
// padding the client takes is found by bisection against net/http's
// HTTP/2 server and client over a unix socket (h2c, the oracle) and
// in-process; the two must agree to the byte.

import (
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strings"
	"testing"
)

// a6Largest is the largest pad each transport takes, oracle second.
func a6Largest(t *testing.T, trace bool, shape func(w http.ResponseWriter, pad string), ok func(resp *http.Response) bool) [2]int {
	const maxResponse = 1000
	var res [2]int
	for i, tr := range transports {
		var n int
		hc, base := limitedClient(t, tr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/x" {
				return
			}
			shape(w, strings.Repeat("p", n))
		}), headerLimits{response: maxResponse})
		warm(t, hc, base)
		res[i] = a5Largest(0, 2500, func(nn int) bool {
			n = nn
			ctx := t.Context()
			if trace {
				ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
					Got1xxResponse: func(int, textproto.MIMEHeader) error { return nil },
				})
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/x", nil)
			resp, err := hc.Do(req)
			if err != nil {
				return false
			}
			_, err = drain(resp.Body)
			if err != nil {
				return false
			}
			if ok != nil {
				return ok(resp)
			}
			return true
		})
	}
	return res
}

func TestAttack6ResponseHeadDateShapes(t *testing.T) {
	shapes := map[string]func(w http.ResponseWriter, pad string){
		// The Date key is there with no value: net/http's server adds
		// none (it looks for the key) and sends none.
		"date-nil": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = nil
			w.Header().Set("X-Pad", pad)
		},
		"date-empty-list": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{}
			w.Header().Set("X-Pad", pad)
		},
		"date-empty-value": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{""}
			w.Header().Set("X-Pad", pad)
		},
		"date-short": func(w http.ResponseWriter, pad string) {
			w.Header().Set("Date", "x")
			w.Header().Set("X-Pad", pad)
		},
		"date-two-values": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = []string{"a", "Mon, 02 Jan 2006 15:04:05 GMT"}
			w.Header().Set("X-Pad", pad)
		},
		// A lower-case "date" is a field like any other: the server
		// still adds its own Date.
		"date-lower-case": func(w http.ResponseWriter, pad string) {
			w.Header()["date"] = []string{"x"}
			w.Header().Set("X-Pad", pad)
		},
		"date-deleted-after-write": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Date", "too late")
		},
		"date-set-after-flush-with-trailer": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.Header().Set("Trailer", "Date")
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Date", "as a trailer")
		},
		"status-304": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusNotModified)
		},
		"status-204": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusNoContent)
		},
		"status-999": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(999)
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

// 1xx heads near the limit: net/http's server puts no Date in a 1xx head
// unless the handler's header has one.
func TestAttack6InformationalDateShapes(t *testing.T) {
	if raceDetector {
		// Near the limit the client resets the stream, and net/http's
		// HTTP/2 server then lets WriteHeader(1xx) return while its
		// writer still reads the header map the handler goes on to
		// change: the detector reports net/http's own read.
		t.Skip("net/http reads a 1xx head's header map after WriteHeader returns")
	}
	shapes := map[string]func(w http.ResponseWriter, pad string){
		"103-no-date": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("X-Pad")
		},
		"103-date-set": func(w http.ResponseWriter, pad string) {
			w.Header().Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("X-Pad")
		},
		"103-date-nil": func(w http.ResponseWriter, pad string) {
			w.Header()["Date"] = nil
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("X-Pad")
		},
		"103-pad-kept-in-final": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusEarlyHints)
		},
		"102-then-103": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusProcessing)
			w.Header().Set("X-Pad", "q")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("X-Pad")
		},
		"100-explicit": func(w http.ResponseWriter, pad string) {
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusContinue)
			w.Header().Del("X-Pad")
		},
		"103-content-length": func(w http.ResponseWriter, pad string) {
			w.Header().Set("Content-Length", "5")
			w.Header().Set("X-Pad", pad)
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("X-Pad")
			w.Write([]byte("hello"))
		},
	}
	for _, name := range slices.Sorted(mapsKeys(shapes)) {
		for _, trace := range []bool{false, true} {
			tn := name + "/no-trace"
			if trace {
				tn = name + "/trace"
			}
			t.Run(tn, func(t *testing.T) {
				res := a6Largest(t, trace, shapes[name], nil)
				if res[0] != res[1] {
					t.Errorf("largest X-Pad the client took: inproc %d, net/http h2c (oracle) %d", res[0], res[1])
				}
			})
		}
	}
}

// Trailers near the limit: the largest pad with which every trailer
// reaches the client, with and without a Date in the head.
func TestAttack6TrailerLimitShapes(t *testing.T) {
	all := func(keys ...string) func(resp *http.Response) bool {
		return func(resp *http.Response) bool {
			for _, k := range keys {
				if resp.Trailer.Get(k) == "" {
					return false
				}
			}
			return true
		}
	}
	cases := map[string]struct {
		shape func(w http.ResponseWriter, pad string)
		ok    func(*http.Response) bool
	}{
		"declared-no-date": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Trailer", "X-T")
			w.Write([]byte("b"))
			w.Header().Set("X-T", pad+"t")
		}, all("X-T")},
		"declared-date-set": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
			w.Header().Set("Trailer", "X-T")
			w.Write([]byte("b"))
			w.Header().Set("X-T", pad+"t")
		}, all("X-T")},
		"prefix-no-date": {func(w http.ResponseWriter, pad string) {
			w.Write([]byte("b"))
			w.Header().Set(http.TrailerPrefix+"X-T", pad+"t")
		}, all("X-T")},
		"prefix-two-last-fits": {func(w http.ResponseWriter, pad string) {
			w.Write([]byte("b"))
			w.Header().Set(http.TrailerPrefix+"X-A", pad+"a")
			w.Header().Set(http.TrailerPrefix+"X-B", "b")
		}, all("X-A", "X-B")},
		"prefix-two-first-only": {func(w http.ResponseWriter, pad string) {
			w.Write([]byte("b"))
			w.Header().Set(http.TrailerPrefix+"X-A", pad+"a")
			w.Header().Set(http.TrailerPrefix+"X-B", "b")
		}, all("X-A")},
		"declared-and-prefix": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Trailer", "X-Z")
			w.Write([]byte("b"))
			w.Header().Set("X-Z", "z")
			w.Header().Set(http.TrailerPrefix+"X-A", pad+"a")
		}, all("X-A", "X-Z")},
		"date-as-trailer": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Trailer", "Date, X-T")
			w.Write([]byte("b"))
			w.Header().Set("Date", "d")
			w.Header().Set("X-T", pad+"t")
		}, all("X-T")},
		"multi-value-trailer": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Trailer", "X-T")
			w.Write([]byte("b"))
			w.Header()["X-T"] = []string{"1", pad + "t", "3"}
		}, func(resp *http.Response) bool { return len(resp.Trailer["X-T"]) == 3 }},
		"big-head-small-trailer": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Trailer", "X-T")
			w.Header().Set("X-Head", strings.Repeat("h", 900))
			w.Write([]byte("b"))
			w.Header().Set("X-T", pad+"t")
		}, all("X-T")},
		"no-body": {func(w http.ResponseWriter, pad string) {
			w.Header().Set("Trailer", "X-T")
			w.Header().Set("X-T", pad+"t")
		}, all("X-T")},
	}
	for _, name := range slices.Sorted(mapsKeys(cases)) {
		t.Run(name, func(t *testing.T) {
			res := a6Largest(t, false, cases[name].shape, cases[name].ok)
			if res[0] != res[1] {
				t.Errorf("largest pad with every trailer through: inproc %d, net/http h2c (oracle) %d", res[0], res[1])
			}
		})
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
