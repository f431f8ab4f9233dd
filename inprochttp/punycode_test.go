package inprochttp

import (
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzPunycodeHostPort checks punycodeHostPort, which puts a host in
// punycode as net/http's client does, against the function net/http's
// client calls (httpguts.PunycodeHostPort, through golang.org/x/net/idna),
// which this package does not import: the same host, or an error from both.
func FuzzPunycodeHostPort(f *testing.F) {
	for _, s := range []string{
		"example.com", "bücher.example", "bücher.example:8080", "xn--bcher-kva.example",
		"[::1]:80", "日本語.jp", "ÄÖÜ", "a..b", "", ":80", "ü:", "xn--", "xn--a", "-ü-.de",
		"例え.テスト:443", "\u00ad", "a\u0300", "ü.ü.ü", "xn--zz", "straße.de",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, gotErr := punycodeHostPort(v)
		want, wantErr := httpguts.PunycodeHostPort(v)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && got != want {
			t.Fatalf("punycodeHostPort(%q) = %q, %v; net/http's client sends %q, %v", v, got, gotErr, want, wantErr)
		}
	})
}
