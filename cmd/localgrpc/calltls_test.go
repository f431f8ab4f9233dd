package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc/credentials"
)

// testPKI is a CA made for a test, a server certificate it signed for
// localhost and 127.0.0.1, and a client certificate it signed, the last
// two's files in dir.
type testPKI struct {
	dir    string
	pool   *x509.CertPool
	server tls.Certificate
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// serverCert is a server certificate the CA signed for the DNS names.
func (p *testPKI) serverCert(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	key, der := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(4), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: names, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, p.ca, p.caKey)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// newTestPKI makes a testPKI, writing ca.pem, client.pem and
// client-key.pem in a directory of its own.
func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), pool: x509.NewCertPool()}
	caKey, caDER := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localgrpc test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}, nil, nil)
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p.pool.AddCert(ca)
	p.ca, p.caKey = ca, caKey
	writePEM(t, filepath.Join(p.dir, "ca.pem"), "CERTIFICATE", caDER)

	serverKey, serverDER := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, caKey)
	p.server = tls.Certificate{Certificate: [][]byte{serverDER}, PrivateKey: serverKey}

	clientKey, clientDER := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	writePEM(t, filepath.Join(p.dir, "client.pem"), "CERTIFICATE", clientDER)
	keyDER, err := x509.MarshalPKCS8PrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(p.dir, "client-key.pem"), "PRIVATE KEY", keyDER)
	return p
}

// newCert makes a key and a certificate of it from tmpl, signed by parent
// (itself if nil).
func newCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *testPKI) file(name string) string { return filepath.Join(p.dir, name) }

// serverConfig is the TLS configuration of a test server: its
// certificate, and clientAuth for client certificates signed by the CA.
func (p *testPKI) serverConfig(clientAuth tls.ClientAuthType) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, ClientCAs: p.pool, ClientAuth: clientAuth}
}

// startTLSServer serves Echo over TLS on 127.0.0.1 with stack's server:
// grpc-go through localgrpc, connect-go through net/http (HTTP/2 and
// HTTP/1.1). It returns the address.
func startTLSServer(t *testing.T, stack string, cfg *tls.Config) string {
	t.Helper()
	if stack == stackGRPC {
		s := localgrpc.NewServer(localgrpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		echov1.RegisterEchoServer(s, echo.Server{})
		if err := s.Listen("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve(context.Background()) }()
		t.Cleanup(func() {
			s.Stop()
			<-served
		})
		return s.Addrs()[0]
	}
	mux := http.NewServeMux()
	mux.Handle(echov1connect.NewEchoHandler(echoconnect.Server{}))
	ts := httptest.NewUnstartedServer(mux)
	ts.EnableHTTP2 = true
	ts.TLS = cfg
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the tests'
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

// TestCallTLS calls servers that speak TLS with every client stack, with
// and without what it takes to trust them: each call either answers or
// fails with an error that names the flag to pass.
func TestCallTLS(t *testing.T) {
	pki := newTestPKI(t)
	const answer = `{"text":"hi"}` + "\n"
	type tc struct {
		name string
		args []string
		code int
		want string // in stdout for exitOK, in stderr otherwise
	}
	serverOnly := []tc{
		{"cacert", []string{"--cacert", pki.file("ca.pem")}, exitOK, answer},
		{"cacert and servername", []string{"--cacert", pki.file("ca.pem"), "--servername", "localhost"}, exitOK, answer},
		{"cacert and authority", []string{"--cacert", pki.file("ca.pem"), "--authority", "localhost"}, exitOK, answer},
		{"insecure", []string{"--insecure"}, exitOK, answer},
		{"unknown CA", []string{"--servername", "localhost"}, exitFailure, "--cacert FILE"},
		{"wrong name", []string{"--cacert", pki.file("ca.pem"), "--servername", "other.example"}, exitFailure, "--servername NAME"},
		{"plaintext", []string{"--plaintext"}, exitFailure, "call without --plaintext"},
		{"plaintext by default on loopback", nil, exitFailure, "pass --cacert FILE (or --insecure)"},
	}
	withClientCert := []tc{
		{"client cert", []string{"--cacert", pki.file("ca.pem"), "--cert", pki.file("client.pem"), "--key", pki.file("client-key.pem")}, exitOK, answer},
		{"no client cert", []string{"--cacert", pki.file("ca.pem")}, exitFailure, "pass --cert FILE and --key FILE"},
	}
	for _, server := range []string{stackGRPC, stackConnect} {
		clients := []string{echoclient.GRPC}
		if server == stackConnect {
			clients = []string{echoclient.Connect, echoclient.ConnectGRPC, echoclient.ConnectGRPCWeb}
		}
		for _, auth := range []struct {
			name  string
			mode  tls.ClientAuthType
			cases []tc
		}{
			{"server-cert", tls.NoClientCert, serverOnly},
			{"client-cert", tls.RequireAndVerifyClientCert, withClientCert},
		} {
			addr := startTLSServer(t, server, pki.serverConfig(auth.mode))
			for _, client := range clients {
				for _, c := range auth.cases {
					t.Run("server="+server+"/"+auth.name+"/stack="+client+"/"+c.name, func(t *testing.T) {
						args := append([]string{"call", "get", "--address", addr, "--stack", client, "-m", "hi", "--timeout", "20s"}, c.args...)
						code, stdout, stderr := runCLI(t.Context(), args...)
						if code != c.code {
							t.Fatalf("exit status %d, want %d; stdout: %q; stderr:\n%s", code, c.code, stdout, stderr)
						}
						if c.code == exitOK {
							if stdout != c.want {
								t.Errorf("stdout %q, want %q", stdout, c.want)
							}
							return
						}
						if !strings.Contains(stderr, c.want) {
							t.Errorf("stderr does not name what to pass, %q:\n%s", c.want, stderr)
						}
					})
				}
			}
		}
	}
}

// TLS to a server that speaks plaintext says to pass --plaintext.
func TestCallTLSToPlaintext(t *testing.T) {
	for _, server := range []string{stackGRPC, stackConnect} {
		addrs, _, _ := startServe(t, 1, "--stack", server, "127.0.0.1:0")
		client := echoclient.GRPC
		if server == stackConnect {
			client = echoclient.Connect
		}
		t.Run("server="+server, func(t *testing.T) {
			code, _, stderr := runCLI(t.Context(), "call", "get", "--address", addrs[0], "--stack", client, "--insecure", "--timeout", "20s")
			if code != exitFailure || !strings.Contains(stderr, "pass --plaintext") {
				t.Errorf("exit status %d (want %d), stderr does not say to pass --plaintext:\n%s", code, exitFailure, stderr)
			}
		})
	}
}

// The security flags that contradict one another, or name files that do
// not hold what they must, are usage errors that name them.
func TestCallSecurityFlagErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	const addr = "127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plaintext", "--insecure"}, "--plaintext turns TLS off"},
		{[]string{"--plaintext", "--cacert", notPEM}, "--plaintext turns TLS off"},
		{[]string{"--insecure", "--cacert", notPEM}, "--insecure skips verifying"},
		{[]string{"--cert", notPEM}, "--cert and --key go together"},
		{[]string{"--key", notPEM}, "--cert and --key go together"},
		{[]string{"--authority", "a", "--servername", "b"}, "give --authority or --servername"},
		{[]string{"--cacert", missing}, "--cacert: "},
		{[]string{"--cacert", notPEM}, "no PEM certificate"},
		{[]string{"--cert", notPEM, "--key", notPEM}, "--cert " + notPEM + " --key " + notPEM},
	} {
		for _, stack := range []string{echoclient.GRPC, echoclient.Connect} {
			t.Run(stack+"/"+strings.Join(tc.args, " "), func(t *testing.T) {
				code, _, stderr := runCLI(t.Context(), append([]string{"call", "get", "--address", addr, "--stack", stack}, tc.args...)...)
				if code != exitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("exit status %d (want %d), stderr lacks %q:\n%s", code, exitUsage, tc.want, stderr)
				}
			})
		}
	}
}

// Another machine's address is called over TLS unless --plaintext; a
// socket, or TCP on this machine, in plaintext unless a TLS flag is given.
func TestCallSecurityDefault(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		flags securityFlags
		tls   bool
	}{
		{"unix:@x", securityFlags{}, false},
		{"unix:/tmp/x", securityFlags{}, false},
		{"127.0.0.1:8080", securityFlags{}, false},
		{"[::1]:8080", securityFlags{}, false},
		{"localhost:8080", securityFlags{}, false},
		{":8080", securityFlags{}, false},
		{"LOCALHOST:8080", securityFlags{}, false},
		// A trailing dot makes localhost a DNS name, which may go anywhere.
		{"localhost.:8080", securityFlags{}, true},
		{"dns:///localhost.:8080", securityFlags{}, true},
		{"10.0.0.7:8080", securityFlags{}, true},
		{"api.example.com:443", securityFlags{}, true},
		{"api.example.com:443", securityFlags{plaintext: true}, false},
		{"127.0.0.1:8080", securityFlags{insecure: true}, true},
		{"unix:@x", securityFlags{cacert: "ca.pem"}, true},
	} {
		a, err := localgrpc.ParseAddress(tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.flags.useTLS(a); got != tc.tls {
			t.Errorf("%s with %+v: TLS %v, want %v", tc.addr, tc.flags, got, tc.tls)
		}
	}
}
