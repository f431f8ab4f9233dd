package main

import (
	"context"
	"crypto/rand"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestServePrintsAbstractForms: serve prints an abstract socket in both
// forms, unix:@NAME and unix-abstract:NAME, and other addresses as they
// are; servedAddress reads each back.
func TestServePrintsAbstractForms(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux's")
	}
	sock := filepath.Join(t.TempDir(), "echo.sock")
	name := "localgrpc-test-" + rand.Text()
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // serve prints what it serves, then stops
	for _, stack := range []string{stackGRPC, stackConnect} {
		code, stdout, stderr := runCLI(ctx, "serve", "--stack", stack, "unix:"+sock, "unix-abstract:"+name)
		if code != exitOK {
			t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
		}
		want := "serving echo.v1.Echo with " + stack + " on unix:" + sock + "\n" +
			"serving echo.v1.Echo with " + stack + " on unix:@" + name + " (unix-abstract:" + name + " for grpcio, C++)\n"
		if stdout != want {
			t.Errorf("serve printed:\n%s\nwant:\n%s", stdout, want)
		}
		var addrs []string
		for line := range strings.Lines(stdout) {
			a, ok := servedAddress(strings.TrimSuffix(line, "\n"))
			if !ok {
				t.Errorf("servedAddress(%q) is not an address", line)
			}
			addrs = append(addrs, a)
		}
		if want := []string{"unix:" + sock, "unix:@" + name}; strings.Join(addrs, " ") != strings.Join(want, " ") {
			t.Errorf("servedAddress read %q, want %q", addrs, want)
		}
	}
	if _, ok := servedAddress("stopping: waiting for the calls in flight"); ok {
		t.Error("servedAddress read an address in a line that has none")
	}
}

// TestAbstractFormsClients checks the table of which form of an
// abstract socket's address each client takes (docs/cli.md), for the
// clients this module has: grpc-go takes both (its resolver registers
// the unix and unix-abstract schemes), grpcurl only unix:@NAME (it dials
// a target without "://" through passthrough, whose dialer knows unix:
// alone), grpc-health-probe both (it hands -addr to grpc-go), and buf
// curl neither (it takes a URL, and the socket in --unix-socket).
func TestAbstractFormsClients(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux's")
	}
	name := "localgrpc-test-" + rand.Text()
	startServe(t, 1, "unix:@"+name)
	forms := []string{"unix:@" + name, "unix-abstract:" + name}
	for _, target := range forms {
		cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatalf("grpc-go, %s: %v", target, err)
		}
		resp, err := healthpb.NewHealthClient(cc).Check(t.Context(), &healthpb.HealthCheckRequest{})
		cc.Close()
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("grpc-go, %s: %v, %v", target, resp, err)
		}
	}

	tool := grpcurl(t)
	for target, works := range map[string]bool{forms[0]: true, forms[1]: false} {
		out, err := exec.CommandContext(t.Context(), tool, "-plaintext", "-connect-timeout", "0.5", target, "list").CombinedOutput()
		if got := err == nil && strings.Contains(string(out), "echo.v1.Echo"); got != works {
			t.Errorf("grpcurl %s list: works %v, want %v: %v\n%s", target, got, works, err, out)
		}
	}

	probe := goTool(t, "grpc-health-probe")
	for _, target := range forms {
		out, err := exec.CommandContext(t.Context(), probe, "-addr", target, "-connect-timeout", "5s", "-rpc-timeout", "5s").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "status: SERVING") {
			t.Errorf("grpc-health-probe -addr %s: %v\n%s", target, err, out)
		}
	}
}

// TestBufCurl checks what docs/cli.md says of buf curl: it reaches a
// grpc-go server (serve's default stack) on an abstract socket given in
// --unix-socket with an http://localhost URL, in the gRPC protocol over
// HTTP/2 without TLS (--protocol grpc --http2-prior-knowledge); without
// them its default, the Connect protocol, finds no service through
// reflection, which grpc-go serves in the gRPC protocol alone.
func TestBufCurl(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux's")
	}
	name := "localgrpc-test-" + rand.Text()
	startServe(t, 1, "unix:@"+name)
	buf := goTool(t, "buf")
	const url = "http://localhost/grpc.health.v1.Health/Check"
	for _, tc := range []struct {
		flags []string
		works bool
	}{
		{[]string{"--protocol", "grpc", "--http2-prior-knowledge"}, true},
		{[]string{"--http2-prior-knowledge"}, false},
	} {
		args := append(append([]string{"curl"}, tc.flags...), "--unix-socket", "@"+name, "--connect-timeout", "5", url)
		out, err := exec.CommandContext(t.Context(), buf, args...).CombinedOutput()
		if got := err == nil && strings.Contains(string(out), `"SERVING"`); got != tc.works {
			t.Errorf("buf %s: works %v, want %v: %v\n%s", strings.Join(args, " "), got, tc.works, err, out)
		}
	}
}
