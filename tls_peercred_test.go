package localgrpc_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

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
