package inprochttp_test

import (
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/inprochttp"
)

// ctxValues are the values net/http's server puts in every handler's
// context, as a handler reads them.
type ctxValues struct {
	server *http.Server
	local  net.Addr
	remote string
}

// serveTwice serves two GETs through hc and returns what the handler saw
// of its context at each.
func serveTwice(t *testing.T, client func(*testing.T, http.Handler) (*http.Client, string)) [2]ctxValues {
	t.Helper()
	saw := make(chan ctxValues, 2)
	hc, base := client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As a handler would: a missing value would panic here.
		saw <- ctxValues{
			server: r.Context().Value(http.ServerContextKey).(*http.Server),
			local:  r.Context().Value(http.LocalAddrContextKey).(net.Addr),
			remote: r.RemoteAddr,
		}
	}))
	var got [2]ctxValues
	for i := range got {
		resp, err := hc.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		drain(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %s (did the handler panic?)", i, resp.Status)
		}
		got[i] = <-saw
	}
	return got
}

// The handler's context holds the *http.Server that serves it, the same
// for every request, and a local address, as net/http's always does.
func TestServerContextValues(t *testing.T) {
	forEach(t, func(t *testing.T, tr transport) {
		got := serveTwice(t, tr.client)
		if got[0].server == nil || got[0].server != got[1].server {
			t.Errorf("ServerContextKey: %p then %p, want one server for both", got[0].server, got[1].server)
		}
		if got[0].local == nil {
			t.Error("LocalAddrContextKey: nil net.Addr")
		}
	})
}

// In-process, the local address names the exchange as RemoteAddr does,
// and the server is WithServer's or, without it, one of the transport's
// own with its error log.
func TestInprocServerContext(t *testing.T) {
	errorLog := log.New(io.Discard, "", 0)
	given := &http.Server{ReadTimeout: time.Minute}
	for _, tc := range []struct {
		name       string
		opts       []inprochttp.Option
		wantServer func(*http.Server) bool
	}{
		{
			name:       "default",
			opts:       []inprochttp.Option{inprochttp.WithErrorLog(errorLog)},
			wantServer: func(s *http.Server) bool { return s != given && s.ErrorLog == errorLog && s.Handler != nil },
		},
		{
			name:       "with-server",
			opts:       []inprochttp.Option{inprochttp.WithServer(given)},
			wantServer: func(s *http.Server) bool { return s == given },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serveTwice(t, func(t *testing.T, h http.Handler) (*http.Client, string) {
				return &http.Client{Transport: inprochttp.NewTransport(h, tc.opts...)}, "http://localhost"
			})
			if s := got[0].server; !tc.wantServer(s) {
				t.Errorf("ServerContextKey: %+v", s)
			}
			if a := got[0].local; a.Network() != "inproc" || a.String() != "inproc" || got[0].remote != "inproc" {
				t.Errorf("LocalAddrContextKey: %s %q, RemoteAddr %q; want inproc for all", a.Network(), a, got[0].remote)
			}
		})
	}
}
