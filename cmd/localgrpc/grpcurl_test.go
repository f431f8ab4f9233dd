package main

import (
	"bytes"
	"crypto/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// grpcurl returns the path of grpcurl, a tool of this module.
func grpcurl(t *testing.T) string {
	t.Helper()
	return goTool(t, "grpcurl")
}

// goTool returns the path of a tool of this module (go.mod's tool
// directives), which `go tool` builds if it has not yet.
func goTool(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "-n", name).Output()
	if err != nil {
		t.Fatalf("go tool -n %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// TestGRPCurl lists and calls the service with grpcurl, through
// reflection, on both stacks over TCP, a unix socket (by grpcurl's -unix
// and by localgrpc's address) and an abstract socket, and through the
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
		addrs, _, _ := startServe(t, 3, "--stack", stack, "127.0.0.1:0", "unix:"+sock, "unix:@localgrpc-test-"+rand.Text())
		for kind, target := range map[string][]string{
			"tcp":          {addrs[0]},
			"unix":         {"-unix", sock},
			"unix-address": {addrs[1]},
			"abstract":     {"-authority", "localhost", addrs[2]},
		} {
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

// TestGRPCurlExample runs the grpcurl command of `descriptors --help` as
// it is written, but for the server's name and the protoset's path, on
// both stacks.
func TestGRPCurlExample(t *testing.T) {
	var example []string
	for line := range strings.Lines(newDescriptorsCmd().Example) {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == "grpcurl" {
			example = fields[1:]
		}
	}
	if example == nil {
		t.Fatal("descriptors --help shows no grpcurl command")
	}
	dir := t.TempDir()
	protoset := filepath.Join(dir, "echo.protoset")
	if code, _, stderr := runCLI(t.Context(), "descriptors", "-o", protoset); code != exitOK {
		t.Fatal(stderr)
	}
	tool := grpcurl(t)
	for _, stack := range []string{stackGRPC, stackConnect} {
		t.Run("server="+stack, func(t *testing.T) {
			addrs, _, _ := startServe(t, 1, "--stack", stack, "unix:@localgrpc-test-"+rand.Text())
			args := make([]string, len(example))
			for i, a := range example {
				switch a {
				case "echo.protoset":
					a = protoset
				case "unix:@echo":
					a = addrs[0]
				}
				args[i] = strings.TrimSuffix(strings.TrimPrefix(a, "'"), "'") // as the shell would
			}
			cmd := exec.CommandContext(t.Context(), tool, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if want := "{\n  \"text\": \"hi\"\n}\n"; err != nil || string(out) != want {
				t.Errorf("grpcurl %s: %v, printed:\n%s%s\nwant:\n%s", strings.Join(args, " "), err, out, &stderr, want)
			}
		})
	}
}
