package localgrpc

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	good := []struct {
		in   string
		want Address
	}{
		{"inproc:x", Address{Kind: Inproc, Name: "x"}},
		{"unix:/run/x.sock", Address{Kind: Unix, Path: "/run/x.sock"}},
		{"unix:rel/x.sock", Address{Kind: Unix, Path: "rel/x.sock"}},
		{"unix:///run/x.sock", Address{Kind: Unix, Path: "/run/x.sock"}},
		{"unix:@x", Address{Kind: Abstract, Name: "x"}},
		{"unix-abstract:x", Address{Kind: Abstract, Name: "x"}},
		{"127.0.0.1:8080", Address{Kind: TCP, HostPort: "127.0.0.1:8080"}},
		{"localhost:0", Address{Kind: TCP, HostPort: "localhost:0"}},
		{":8080", Address{Kind: TCP, HostPort: ":8080"}},
		{"[::1]:443", Address{Kind: TCP, HostPort: "[::1]:443"}},
		{"dns:///example.com:443", Address{Kind: Target, Target: "dns:///example.com:443"}},
		{"passthrough:///10.0.0.1:80", Address{Kind: Target, Target: "passthrough:///10.0.0.1:80"}},
	}
	for _, tc := range good {
		got, err := parseAddress(tc.in, "linux")
		if err != nil || got != tc.want {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestParseAddressErrors checks that every bad address gets an
// *AddressError that names it and says what is wrong.
func TestParseAddressErrors(t *testing.T) {
	bad := []struct {
		in, goos, want string
	}{
		{"", "linux", "empty address"},
		{"   ", "linux", "empty address"},
		{"inproc:", "linux", "no name"},
		{"unix:", "linux", "no socket path"},
		{"unix://relative", "linux", "absolute path"},
		{"unix:@", "linux", "no name for the abstract socket"},
		{"unix:@x", "darwin", "only on Linux"},
		{"unix-abstract:x", "windows", "only on Linux"},
		{"http://example.com", "linux", `unknown scheme "http"`},
		{"tcp://1.2.3.4:5", "linux", `unknown scheme "tcp"`},
		{"foo:bar", "linux", `"foo" is not a known scheme`},
		{"localhost", "linux", "HOST:PORT"},
		{"127.0.0.1:70000", "linux", "port 70000 is out of range"},
		{"127.0.0.1:-1", "linux", "port -1 is out of range"},
		{":http", "linux", `port "http" is not a number`},
		{"localhost\x00:80", "linux", `control character "\x00"`},
		{"exa\tmple.com:80", "linux", `control character "\t"`},
		{"exa mple.com:80", "linux", `contains " "`},
		{"[::1%a/b]:80", "linux", `contains "/"`},
		{"bücher.example:80", "linux", "ASCII (IDNA) form"},
		{"passthrough:///%zz:80", "linux", `"%zz" is not a percent escape`},
		{"dns:///%zz:80", "linux", `"%zz" is not a percent escape`},
		{"dns:///localhost%0:80", "linux", "is not a percent escape"},
		{"dns:///local\x7fhost:80", "linux", `control character "\x7f"`},
		{"dns:///localhost%00:80", "linux", `decode to the control character "\x00"`},
		{"passthrough:///a%0ab:80", "linux", `decode to the control character "\n"`},
		{"dns:///exa%20mple.com:80", "linux", `contains " "`},
	}
	for _, tc := range bad {
		_, err := parseAddress(tc.in, tc.goos)
		var ae *AddressError
		if !errors.As(err, &ae) {
			t.Errorf("ParseAddress(%q) on %s = %v, want an *AddressError", tc.in, tc.goos, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), strconv.Quote(tc.in)) || ae.Address != tc.in {
			t.Errorf("ParseAddress(%q) on %s: %q, want it to name the address and say %q", tc.in, tc.goos, err, tc.want)
		}
	}
}

// roundTripSeeds are addresses whose canonical form once failed to parse
// back to themselves, and the forms of the grammar.
var roundTripSeeds = []string{
	"inproc:x", "inproc: ", "unix:/run/x.sock", "unix:rel/x.sock", "unix:///run/x.sock",
	"unix:////tmp/x.sock", "unix://///x", "unix:@x", "unix-abstract:x", "unix-abstract:@x",
	"127.0.0.1:8080", ":8080", "[::1]:443", "[fe80::1%eth0]:1", "localhost:0",
	"[unix]:80", "[inproc]:1", "[unix-abstract]:2", "[a:/b]:80", "[a://b]:80", "[dns]:53",
	"127.0.0.1:080", "h:+80", "dns:///example.com:443", "passthrough:///10.0.0.1:80",
}

// TestAddressRoundTrip checks that the canonical form of every address
// parses back to the same address, as Server.Addrs promises.
func TestAddressRoundTrip(t *testing.T) {
	for _, s := range roundTripSeeds {
		checkRoundTrip(t, s)
	}
}

func FuzzAddressRoundTrip(f *testing.F) {
	for _, s := range roundTripSeeds {
		f.Add(s)
	}
	f.Fuzz(checkRoundTrip)
}

func checkRoundTrip(t *testing.T, s string) {
	a, err := parseAddress(s, "linux")
	if err != nil {
		return
	}
	b, err := parseAddress(a.String(), "linux")
	if err != nil || b != a {
		t.Errorf("ParseAddress(%q) = %+v, whose String %q parses as %+v, %v", s, a, a.String(), b, err)
	}
}

// TestTargetFormsGRPCAlsoTakes: targets grpc-go takes in other spellings
// are refused with the form the grammar takes.
func TestTargetFormsGRPCAlsoTakes(t *testing.T) {
	for addr, want := range map[string]string{
		"dns:localhost:8080":            "dns:///localhost:8080",
		"passthrough:127.0.0.1:8080":    "passthrough:///127.0.0.1:8080",
		"DNS:///localhost:8080":         "dns:///localhost:8080",
		"Passthrough:///127.0.0.1:8080": "passthrough:///127.0.0.1:8080",
		"UNIX:///tmp/x.sock":            "unix:///tmp/x.sock",
	} {
		_, err := ParseAddress(addr)
		var ae *AddressError
		if !errors.As(err, &ae) || !strings.Contains(ae.Reason, want) {
			t.Errorf("ParseAddress(%q): %v, want an *AddressError naming %q", addr, err, want)
		}
	}
}

// TestAddressSocket checks the network and address each kind is dialed
// at, as net.Dial writes them.
func TestAddressSocket(t *testing.T) {
	for _, tc := range []struct {
		in               string
		network, address string
		ok               bool
	}{
		{"unix:/run/x.sock", "unix", "/run/x.sock", true},
		{"unix:///run/x.sock", "unix", "/run/x.sock", true},
		{"unix:@x", "unix", "@x", true},
		{"unix-abstract:x", "unix", "@x", true},
		{"shm:/run/x.sock", "unix", "/run/x.sock", true},
		{"shm:@x", "unix", "@x", true},
		{"127.0.0.1:80", "tcp", "127.0.0.1:80", true},
		{"[::1]:80", "tcp", "[::1]:80", true},
		{"LOCALHOST:80", "tcp", "LOCALHOST:80", true},
		{":80", "tcp", "localhost:80", true},
		{"inproc:x", "", "", false},
		{"dns:///localhost:443", "", "", false},
	} {
		a, err := parseAddress(tc.in, "linux")
		if err != nil {
			t.Fatal(err)
		}
		network, address, ok := a.Socket()
		if network != tc.network || address != tc.address || ok != tc.ok {
			t.Errorf("%q: Socket() = %q, %q, %v; want %q, %q, %v", tc.in, network, address, ok, tc.network, tc.address, tc.ok)
		}
	}
}
