package integration_test

import (
	"errors"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"io"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// TestHTTPClientToGRPCOnlyServer calls a Server (grpc-go) with connect-go
// in each protocol: gRPC works; Connect and gRPC-Web fail at once with a
// ProtocolError, for unary and streaming calls alike.
func TestHTTPClientToGRPCOnlyServer(t *testing.T) {
	addr := "unix:@" + servertest.UniqueName()
	servertest.Serve(t, servertest.NewEchoServer(), addr)
	hc, base, err := localgrpc.HTTPClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	client := func(opts ...connect.ClientOption) echov1connect.EchoClient {
		return echov1connect.NewEchoClient(hc, base, opts...)
	}

	r, err := client(connect.WithGRPC()).Get(servertest.TimeoutCtx(t), connect.NewRequest(&echov1.EchoRequest{Text: "hi"}))
	if err != nil || r.Msg.GetText() != "hi" {
		t.Fatalf("gRPC protocol: %v, %v", r, err)
	}

	for _, p := range []struct {
		name string
		opts []connect.ClientOption
		ct   string
	}{
		{"connect", nil, "application/proto"},
		{"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}, "application/grpc-web+proto"},
	} {
		t.Run("protocol="+p.name+"/method=Get", func(t *testing.T) {
			_, err := client(p.opts...).Get(servertest.TimeoutCtx(t), connect.NewRequest(&echov1.EchoRequest{Text: "hi"}))
			checkProtocolError(t, err, addr, p.ct)
		})
		t.Run("protocol="+p.name+"/method=Expand", func(t *testing.T) {
			s, err := client(p.opts...).Expand(servertest.TimeoutCtx(t), connect.NewRequest(&echov1.EchoRequest{Text: "a b"}))
			if err == nil {
				for s.Receive() {
					t.Errorf("received %v", s.Msg())
				}
				err = s.Err()
				s.Close()
			}
			ct := "application/connect+proto"
			if p.name == "grpc-web" {
				ct = p.ct
			}
			checkProtocolError(t, err, addr, ct)
		})
	}
}

func checkProtocolError(t *testing.T, err error, addr, contentType string) {
	t.Helper()
	var pe *localgrpc.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *localgrpc.ProtocolError", err, err)
	}
	if pe.Addr != addr || pe.ContentType != contentType {
		t.Errorf("ProtocolError{%q, %q}, want {%q, %q}", pe.Addr, pe.ContentType, addr, contentType)
	}
}

// TestHTTPClientPassesOther415 leaves a 415 that is not a gRPC-only
// server's refusal to the caller as it came.
func TestHTTPClientPassesOther415(t *testing.T) {
	addr := "unix:@" + servertest.UniqueName()
	l, err := localgrpc.Listen(addr, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnsupportedMediaType)
		io.WriteString(w, "no")
	}), Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	hc, base, err := localgrpc.HTTPClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	resp, err := hc.Post(base+"/x", "application/proto", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusUnsupportedMediaType || string(body) != "no" {
		t.Errorf("got %d %q, want 415 \"no\"", resp.StatusCode, body)
	}
}
