package localgrpc_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// childServerEnv makes the test binary an Echo server on the addresses
// it holds (comma-separated), serving until its stdin closes: the server
// of the tests and benchmarks that need one in another process.
const childServerEnv = "LOCALGRPC_CHILD_SERVER_ADDRS"

// runChildServer is the child's side: it says "ready" once it listens.
func runChildServer(addrs string) int {
	srv := localgrpc.NewServer(localgrpc.WithHealth())
	echov1.RegisterEchoServer(srv, echo.Server{})
	if err := srv.Listen(strings.Split(addrs, ",")...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	fmt.Println("ready")
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childServer starts an Echo server on addrs in a child process, stopped
// when the test ends; it returns the child's process.
func childServer(t testing.TB, addrs ...string) *os.Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childServerEnv+"="+strings.Join(addrs, ","))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the child server did not start: %q, %v", line, err)
	}
	return cmd.Process
}
