package inproc_test

import (
	"context"

	"slices"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// infoCreds sends, as "ri-method", the method its context's
// credentials.RequestInfo names.
type infoCreds struct{}

func (infoCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	ri, ok := credentials.RequestInfoFromContext(ctx)
	if !ok {
		return map[string]string{"ri-method": "none"}, nil
	}
	return map[string]string{"ri-method": ri.Method}, nil
}
func (infoCreds) RequireTransportSecurity() bool { return false }

// TestPerRPCCredsRequestInfoAsGRPC: grpc-go's transport calls
// GetRequestMetadata with a context carrying credentials.RequestInfo (the
// method, the connection's AuthInfo); credentials such as oauth's read it.
func TestPerRPCCredsRequestInfoAsGRPC(t *testing.T) {
	seen := make(chan []string, 1)
	srv := &funcEcho{get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		seen <- md.Get("ri-method")
		return &echov1.EchoResponse{}, nil
	}}
	run := func(t *testing.T, c echov1.EchoClient) []string {
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.PerRPCCredentials(infoCreds{})); err != nil {
			t.Fatal(err)
		}
		return receive(t, seen, "the handler")
	}
	want := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: %q", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		if got := run(t, c); !slices.Equal(got, want) {
			t.Errorf("the credentials saw RequestInfo.Method %q; grpc-go %q", got, want)
		}
	})
}

// privateCreds are per-RPC credentials that, as oauth's do, refuse to send
// a token over a connection less secure than TLS.
type privateCreds struct{}

func (privateCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	ri, _ := credentials.RequestInfoFromContext(ctx)
	if err := credentials.CheckSecurityLevel(ri.AuthInfo, credentials.PrivacyAndIntegrity); err != nil {
		return nil, err
	}
	return map[string]string{"token": "t"}, nil
}
func (privateCreds) RequireTransportSecurity() bool { return true }

// TestPerRPCCredsSeePrivateConnection checks that credentials that check
// the connection's security level, as oauth's do, find an in-process call
// private: it never leaves the process (see the package doc).
func TestPerRPCCredsSeePrivateConnection(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		var got []string
		c, _ := newEcho(t, m, &funcEcho{get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			got = md.Get("token")
			return &echov1.EchoResponse{}, nil
		}})
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.PerRPCCredentials(privateCreds{})); err != nil {
			t.Fatalf("Get with credentials that require a private connection: %v", err)
		}
		if len(got) != 1 || got[0] != "t" {
			t.Errorf("the handler got token %q, want the credentials' one", got)
		}
	})
}
