package localgrpc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// TestPeerPolicyFailsClosed checks the peer-credential policy with the
// transport credentials given either way: through WithTransportCredentials
// they compose with it; grpc.Creds through WithGRPCServerOptions replaces the
// server's own, and then every socket call is denied, even for the
// server's own user, with a message that says why and what to do. TCP is
// not the policy's business, and without a policy grpc.Creds works.
func TestPeerPolicyFailsClosed(t *testing.T) {
	other := localgrpc.AllowUIDs(uint32(os.Getuid()) + 1)
	replaced := localgrpc.WithGRPCServerOptions(grpc.Creds(local.NewCredentials()))
	composed := localgrpc.WithTransportCredentials(local.NewCredentials())
	cases := []struct {
		name    string
		opts    []localgrpc.ServerOption
		sockets codes.Code // on unix and abstract sockets; TCP is always OK
		message string     // in a denial
	}{
		{"grpc-creds/other-user", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(other), replaced}, codes.PermissionDenied, "WithTransportCredentials"},
		{"grpc-creds/own-user", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(), replaced}, codes.PermissionDenied, "WithTransportCredentials"},
		{"grpc-creds/no-policy", []localgrpc.ServerOption{replaced}, codes.OK, ""},
		{"transport-creds/other-user", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(other), composed}, codes.PermissionDenied, "not allowed"},
		{"transport-creds/own-user", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(), composed}, codes.OK, ""},
		{"transport-creds/no-policy", []localgrpc.ServerOption{composed}, codes.OK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newEchoServer(append(tc.opts, localgrpc.WithLogger(discardLogger))...)
			serve(t, srv, "unix:"+socketPath(t), "unix:@"+uniqueName(t), "127.0.0.1:0")
			for _, addr := range srv.Addrs() {
				want := tc.sockets
				if transportName(addr) == "transport=tcp" {
					want = codes.OK
				}
				c := dial(t, addr)
				for _, call := range echoCalls {
					_, err := call.Call(timeoutCtx(t), c)
					if status.Code(err) != want {
						t.Errorf("%s %s: %v, want %v", addr, call.Name, err, want)
					} else if want != codes.OK && !strings.Contains(status.Convert(err).Message(), tc.message) {
						t.Errorf("%s %s: %v, want a message saying %q", addr, call.Name, err, tc.message)
					}
				}
			}
		})
	}
}

// refusingCreds are transport credentials whose server handshake fails.
type refusingCreds struct {
	credentials.TransportCredentials
}

func (refusingCreds) ServerHandshake(net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("refused by the test's credentials")
}

// TestTransportCredentialsOnEverySocket checks that the credentials of
// WithTransportCredentials run on unix and abstract sockets as on TCP, as
// grpc.Creds does on a grpc.Server, with or without a peer policy; the
// in-process transport has none.
func TestTransportCredentialsOnEverySocket(t *testing.T) {
	refuse := localgrpc.WithTransportCredentials(refusingCreds{insecure.NewCredentials()})
	for _, opts := range [][]localgrpc.ServerOption{{refuse}, {refuse, localgrpc.WithPeerCredentials()}} {
		srv := newEchoServer(opts...)
		serve(t, srv, "inproc:"+uniqueName(t), "unix:"+socketPath(t), "unix:@"+uniqueName(t), "127.0.0.1:0")
		for _, addr := range srv.Addrs() {
			want := codes.Unavailable
			if transportName(addr) == "transport=inproc" {
				want = codes.OK
			}
			if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); status.Code(err) != want {
				t.Errorf("%s: %v, want %v", addr, err, want)
			}
		}
	}
}

// peerEcho's Get reports what its handler knows of the peer.
type peerEcho struct {
	echov1.UnimplementedEchoServer
	seen chan<- peerSeen
}

type peerSeen struct {
	auth    credentials.AuthInfo
	cred    localgrpc.PeerCred
	hasCred bool
}

func (e peerEcho) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	p, _ := peer.FromContext(ctx)
	c, ok := localgrpc.PeerCredFromContext(ctx)
	e.seen <- peerSeen{auth: p.AuthInfo, cred: c, hasCred: ok}
	return &echov1.EchoResponse{}, nil
}

// TestTransportCredentialsAuthInfo checks what a handler sees with
// WithTransportCredentials(local.NewCredentials()) and a peer policy,
// against a grpc.Server with grpc.Creds of the same on the same kind of
// socket: the same security level, and the credentials' own AuthInfo by
// Unwrap on sockets, with the peer's kernel credentials beside it.
func TestTransportCredentialsAuthInfo(t *testing.T) {
	seen := make(chan peerSeen, 1)
	srv := localgrpc.NewServer(localgrpc.WithTransportCredentials(local.NewCredentials()), localgrpc.WithPeerCredentials())
	echov1.RegisterEchoServer(srv, peerEcho{seen: seen})
	serve(t, srv, "unix:"+socketPath(t), "unix:@"+uniqueName(t), "127.0.0.1:0")

	oracle := grpc.NewServer(grpc.Creds(local.NewCredentials()))
	echov1.RegisterEchoServer(oracle, peerEcho{seen: seen})
	t.Cleanup(oracle.Stop)
	for _, addr := range srv.Addrs() {
		a, _ := localgrpc.ParseAddress(addr)
		var l net.Listener
		switch a.Kind {
		case localgrpc.Unix:
			l = netListen(t, "unix", socketPath(t))
		case localgrpc.Abstract:
			l = netListen(t, "unix", "@"+uniqueName(t))
		default:
			l = netListen(t, "tcp", "127.0.0.1:0")
		}
		go oracle.Serve(l)
		oracleAddr := "unix:" + l.Addr().String()
		if a.Kind == localgrpc.TCP {
			oracleAddr = l.Addr().String()
		}

		if _, err := dial(t, oracleAddr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatalf("grpc-go on %s: %v", oracleAddr, err)
		}
		want := <-seen
		if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		got := <-seen
		if level(got.auth) != level(want.auth) {
			t.Errorf("%s: security level %v, want %v as grpc-go gives", addr, level(got.auth), level(want.auth))
		}
		transport := got.auth
		if a.Kind != localgrpc.TCP {
			u, ok := got.auth.(interface{ Unwrap() credentials.AuthInfo })
			if !ok {
				t.Fatalf("%s: the AuthInfo %T has no Unwrap", addr, got.auth)
			}
			transport = u.Unwrap()
			if !got.hasCred || got.cred.UID != uint32(os.Getuid()) {
				t.Errorf("%s: PeerCredFromContext = %+v, %v; want this process's", addr, got.cred, got.hasCred)
			}
		}
		if transport.AuthType() != want.auth.AuthType() {
			t.Errorf("%s: the credentials' AuthInfo is of type %q, want %q", addr, transport.AuthType(), want.auth.AuthType())
		}
	}
}

func level(ai credentials.AuthInfo) credentials.SecurityLevel {
	if c, ok := ai.(interface {
		GetCommonAuthInfo() credentials.CommonAuthInfo
	}); ok {
		return c.GetCommonAuthInfo().SecurityLevel
	}
	return credentials.InvalidSecurityLevel
}

// opaqueListener accepts connections that hide their socket, as a
// wrapping listener's may: no credentials can be read from them.
type opaqueListener struct{ net.Listener }

type opaqueConn struct{ net.Conn }

func (l opaqueListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return opaqueConn{c}, nil
}

// TestPeerCredentialsUnreadable serves a unix listener whose connections
// hide their socket: the policy cannot read a peer's credentials and
// denies, where it once allowed; with no policy calls go through.
func TestPeerCredentialsUnreadable(t *testing.T) {
	for _, policy := range []bool{true, false} {
		var opts []localgrpc.ServerOption
		want := codes.OK
		if policy {
			opts, want = []localgrpc.ServerOption{localgrpc.WithPeerCredentials(), localgrpc.WithLogger(discardLogger)}, codes.PermissionDenied
		}
		srv := newEchoServer(opts...)
		if err := srv.AddListener(opaqueListener{netListen(t, "unix", "@"+uniqueName(t))}); err != nil {
			t.Fatal(err)
		}
		startServe(t, srv)
		_, err := dial(t, srv.Addrs()[0]).Get(timeoutCtx(t), &echov1.EchoRequest{})
		if status.Code(err) != want || want != codes.OK && !strings.Contains(err.Error(), "cannot be read") {
			t.Errorf("policy %v: %v, want %v saying the credentials cannot be read", policy, err, want)
		}
	}
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// TestTLSWithPeerCredentials: TLS through WithTransportCredentials
// composes with the peer policy on unix and abstract sockets (a foreign
// uid is denied even with a valid TLS handshake); TLS through
// WithGRPCServerOptions(grpc.Creds) denies every socket call.
func TestTLSWithPeerCredentials(t *testing.T) {
	cert, pool := selfSigned(t)
	serverTLS := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
	clientTLS := localgrpc.WithGRPCDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost"})))
	other := localgrpc.AllowUIDs(uint32(os.Getuid()) + 1)
	cases := []struct {
		name string
		opts []localgrpc.ServerOption
		want codes.Code
	}{
		{"transport/own", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(), localgrpc.WithTransportCredentials(serverTLS)}, codes.OK},
		{"transport/other", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(other), localgrpc.WithTransportCredentials(serverTLS)}, codes.PermissionDenied},
		{"grpc-creds/own", []localgrpc.ServerOption{localgrpc.WithPeerCredentials(), localgrpc.WithGRPCServerOptions(grpc.Creds(serverTLS))}, codes.PermissionDenied},
		{"grpc-creds-first/other", []localgrpc.ServerOption{localgrpc.WithGRPCServerOptions(grpc.Creds(serverTLS)), localgrpc.WithPeerCredentials(other)}, codes.PermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newEchoServer(append(tc.opts, localgrpc.WithLogger(discardLogger))...)
			serve(t, srv, "unix:"+socketPath(t), "unix:@"+uniqueName(t))
			for _, a := range srv.Addrs() {
				_, err := dial(t, a, clientTLS).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
				if status.Code(err) != tc.want {
					t.Errorf("%s: %v, want %v", a, err, tc.want)
				}
			}
		})
	}
}
