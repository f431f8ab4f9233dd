package inprochttp_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// sawURL notes the handler's request URL, field by field.
func sawURL(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
	saw("url", fmt.Sprintf("opaque=%q path=%q rawPath=%q rawQuery=%q forceQuery=%v requestURI=%q string=%q",
		r.URL.Opaque, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.URL.ForceQuery, r.RequestURI, r.URL.String()))
}

// urlCases are request URLs the handler must see as net/http's server
// parses them from :path, whatever form the client's URL had.
var urlCases = []exchangeCase{
	{
		// The client sends "/" for an empty path, and the server's
		// r.URL.Path is "/": a root handler's `if r.URL.Path != "/"`
		// serves it.
		name: "empty-path",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base, nil)
			return req
		},
		handler: sawURL,
	},
	{
		name: "empty-path-with-query",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"?a=1", nil)
			return req
		},
		handler: sawURL,
	},
	{
		name: "root-handler-idiom",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base, nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte("home"))
		},
	},
	{
		// URL.Opaque is how a client sends a path as is: the server
		// parses what arrives in :path, its Path and RawPath, with no
		// Opaque.
		name: "opaque",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.URL.Opaque = "/a%2Fb"
			return req
		},
		handler: sawURL,
	},
	{
		name: "opaque-with-authority",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/x", nil)
			req.URL.Opaque = "//" + req.URL.Host + "/a%2Fb"
			return req
		},
		handler: sawURL,
	},
	{
		// A CONNECT names its target in :authority alone: the server's
		// r.URL has it as Host, and so has RequestURI.
		name: "connect",
		request: func(base string) *http.Request {
			u, _ := url.Parse(base)
			return &http.Request{Method: http.MethodConnect, URL: &url.URL{Scheme: "http", Host: u.Host}, Header: http.Header{}, Host: "target:443"}
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			sawURL(w, r, saw)
			saw("host", r.Host)
		},
	},
	// Cases that hold: pinned.
	{
		name: "escaped-slash",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/a%2Fb/c?q=%20", nil)
			return req
		},
		handler: sawURL,
	},
	{
		name: "force-query",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/p?", nil)
			return req
		},
		handler: sawURL,
	},
	{
		name: "dot-segments",
		request: func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, base+"/a/../b/./c", nil)
			return req
		},
		handler: sawURL,
	},
	{
		name: "userinfo-and-fragment",
		request: func(base string) *http.Request {
			u, _ := url.Parse(base + "/p#frag")
			u.User = url.UserPassword("u", "p")
			req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
			return req
		},
		handler: func(w http.ResponseWriter, r *http.Request, saw func(string, any)) {
			sawURL(w, r, saw)
			saw("authorization", r.Header.Get("Authorization"))
		},
	},
}

// TestURLEdges runs each of urlCases in-process and over a unix socket to
// net/http's HTTP/2 server, and compares.
func TestURLEdges(t *testing.T) {
	for _, c := range urlCases {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, transports[0], c)
			want := run(t, transports[1], c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("in-process and net/http differ:\n%s", diff(got, want))
			}
		})
	}
}
