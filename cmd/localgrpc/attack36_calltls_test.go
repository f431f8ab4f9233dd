package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
)

// --authority HOST:PORT over TLS: grpcurl (the oracle; the flags "mean
// what grpcurl's do") sends HOST:PORT as :authority and verifies the
// certificate for HOST. With --stack grpc, call refuses the command line
// (exit 2) with grpc-go's "ClientConn's authority from transport creds
// ... and dial option ... don't match": tlsConfig puts the authority's
// host in tls.Config.ServerName, which grpc-go then takes as an
// authority that contradicts grpc.WithAuthority. The connect stacks call.
func TestAttack36CallAuthorityWithPortTLS(t *testing.T) {
	pki := newTestPKI(t)
	addr := startTLSServer(t, stackGRPC, pki.serverConfig(tls.NoClientCert))
	protoset := filepath.Join(t.TempDir(), "echo.protoset")
	if code, _, stderr := runCLI(t.Context(), "descriptors", "-o", protoset); code != exitOK {
		t.Fatal(stderr)
	}
	for _, authority := range []string{"localhost:443", "localhost:9999"} {
		t.Run(authority, func(t *testing.T) {
			// The oracle.
			cmd := exec.CommandContext(t.Context(), grpcurl(t), "-max-time", "20", "-protoset", protoset, "-cacert", pki.file("ca.pem"),
				"-authority", authority, "-d", `{"text":"hi"}`, addr, "echo.v1.Echo/Get")
			var gerr bytes.Buffer
			cmd.Stderr = &gerr
			if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"hi"`) {
				t.Fatalf("grpcurl -authority %s: %v, %q\n%s", authority, err, out, gerr.Bytes())
			}
			code, stdout, stderr := runCLI(t.Context(), "call", "get", "--address", addr, "--stack", echoclient.GRPC,
				"-m", "hi", "--timeout", "20s", "--cacert", pki.file("ca.pem"), "--authority", authority)
			if code != exitOK || stdout != `{"text":"hi"}`+"\n" {
				t.Errorf("call --authority %s: exit status %d (grpcurl answers), stdout %q; stderr:\n%s", authority, code, stdout, stderr)
			}
		})
	}
}

// A server that accepts connections and never answers (a black hole, or
// a server of another protocol that waits for more bytes than a TLS
// ClientHello or an HTTP/2 preface holds): grpcurl gives up on the
// connection after -connect-timeout (10s by default), grpc-go's stack
// after its 20s connect deadline. The connect-go stacks, with --timeout's
// default of 0, wait forever, over TLS (their http.Transport has no
// TLSHandshakeTimeout) and in plaintext: the call must fail promptly,
// not hang.
func TestAttack36CallBlackHoleHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-accepted
		for _, c := range held {
			c.Close()
		}
	})
	// --connect-timeout 1s (grpcurl's default is 10s, as ours:
	// TestCallConnectTimeoutDefault) keeps the test short; the bound
	// leaves room for a busy machine.
	const limit = 8 * time.Second
	for _, stack := range []string{echoclient.GRPC, echoclient.Connect, echoclient.ConnectGRPC, echoclient.ConnectGRPCWeb} {
		for _, sec := range [][]string{nil, {"--insecure"}} {
			name := "plaintext"
			if sec != nil {
				name = "tls-insecure"
			}
			t.Run(stack+"/"+name, func(t *testing.T) {
				t.Parallel()
				ctx, stop := context.WithTimeout(t.Context(), limit+5*time.Second)
				defer stop()
				start := time.Now()
				code, _, stderr := runCLI(ctx, append([]string{"call", "get", "--address", ln.Addr().String(), "--stack", stack, "--connect-timeout", "1s"}, sec...)...)
				if code != exitFailure {
					t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitFailure, stderr)
				}
				if took := time.Since(start); took > limit {
					t.Errorf("call to a server that never answers took %v (grpcurl gives up after 10s), exit status %d; stderr:\n%s", took.Round(time.Second), code, stderr)
				}
			})
		}
	}
}

// A certificate for other names, called by IP: Go says "cannot validate
// certificate for 127.0.0.1 because it doesn't contain any IP SANs", and
// call passes it on without the hint it gives when the names differ
// ("pass --servername NAME ..."), though --servername is the fix.
func TestAttack36CallNoIPSANsNamesServername(t *testing.T) {
	pki := newTestPKI(t)
	caFile := pki.file("ca.pem")
	cfg := &tls.Config{Certificates: []tls.Certificate{pki.serverCert(t, "other.example")}}
	for _, server := range []string{stackGRPC, stackConnect} {
		addr := startTLSServer(t, server, cfg)
		client := echoclient.GRPC
		if server == stackConnect {
			client = echoclient.Connect
		}
		t.Run(server, func(t *testing.T) {
			code, _, stderr := runCLI(t.Context(), "call", "get", "--address", addr, "--stack", client, "--timeout", "20s", "--cacert", caFile)
			if code != exitFailure || !strings.Contains(stderr, "--servername NAME") {
				t.Errorf("exit status %d (want %d); stderr does not name --servername:\n%s", code, exitFailure, stderr)
			}
		})
	}
}

// call's connect timeout is grpcurl's by default, and its flag says so.
func TestCallConnectTimeoutDefault(t *testing.T) {
	code, help, _ := runCLI(t.Context(), "call", "--help")
	if code != exitOK || !strings.Contains(help, "--connect-timeout d") || !strings.Contains(help, "(default 10s)") {
		t.Errorf("call --help does not give --connect-timeout with grpcurl's default 10s:\n%s", help)
	}
}
