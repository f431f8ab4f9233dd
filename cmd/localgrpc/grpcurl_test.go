package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// grpcurl returns the path of grpcurl, a tool of this module (go.mod), which
// `go tool` builds if it has not yet.
func grpcurl(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "-n", "grpcurl").Output()
	if err != nil {
		t.Fatalf("go tool -n grpcurl: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestGRPCurl lists and calls the service with grpcurl, through
// reflection, on both stacks over TCP and a unix socket, and through the
// descriptors command's protoset.
func TestGRPCurl(t *testing.T) {
	tool := grpcurl(t)
	protoset := filepath.Join(t.TempDir(), "echo.protoset")
	if code, _, stderr := runCLI(t.Context(), "descriptors", "-o", protoset); code != exitOK {
		t.Fatal(stderr)
	}
	run := func(t *testing.T, stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), tool, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("grpcurl %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return string(out)
	}
	const (
		list     = "echo.v1.Echo\ngrpc.health.v1.Health\ngrpc.reflection.v1.ServerReflection\ngrpc.reflection.v1alpha.ServerReflection\n"
		describe = `echo.v1.Echo is a service:
service Echo {
  rpc Collect ( stream .echo.v1.EchoRequest ) returns ( .echo.v1.EchoResponse );
  rpc Expand ( .echo.v1.EchoRequest ) returns ( stream .echo.v1.EchoResponse );
  rpc Get ( .echo.v1.EchoRequest ) returns ( .echo.v1.EchoResponse );
  rpc Update ( stream .echo.v1.EchoRequest ) returns ( stream .echo.v1.EchoResponse );
}
`
		expanded = "{\n  \"text\": \"a\"\n}\n{\n  \"text\": \"b\"\n}\n"
		updated  = "{\n  \"text\": \"x\"\n}\n{\n  \"text\": \"y\"\n}\n"
	)
	for _, stack := range []string{stackGRPC, stackConnect} {
		sock := filepath.Join(t.TempDir(), "echo.sock")
		addrs, _, _ := startServe(t, 2, "--stack", stack, "127.0.0.1:0", "unix:"+sock)
		for kind, target := range map[string][]string{"tcp": {addrs[0]}, "unix": {"-unix", sock}} {
			t.Run("server="+stack+"/address="+kind, func(t *testing.T) {
				base := append([]string{"-plaintext"}, target[:len(target)-1]...)
				addr := target[len(target)-1]
				cases := []struct {
					name, stdin string
					args        []string
					want        string
				}{
					{"list", "", []string{addr, "list"}, list},
					{"describe", "", []string{addr, "describe", "echo.v1.Echo"}, describe},
					{"expand", "", []string{"-d", `{"text":"a b"}`, addr, "echo.v1.Echo/Expand"}, expanded},
					{"update", `{"text":"x"} {"text":"y"}`, []string{"-d", "@", addr, "echo.v1.Echo/Update"}, updated},
					{"protoset", "", []string{"-protoset", protoset, "-d", `{"text":"a b"}`, addr, "echo.v1.Echo/Expand"}, expanded},
				}
				for _, c := range cases {
					if got := run(t, c.stdin, append(base, c.args...)...); got != c.want {
						t.Errorf("%s: grpcurl printed:\n%s\nwant:\n%s", c.name, got, c.want)
					}
				}
			})
		}
	}
}
