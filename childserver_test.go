package localgrpc_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
)

// childServerEnv makes the test binary an Echo server on the addresses
// it holds (comma-separated), serving until it is killed: the server
// of the tests and benchmarks that need one in another process.
const childServerEnv = "LOCALGRPC_CHILD_SERVER_ADDRS"

// runChildServer is the child's side: it says "ready" once it listens.
func runChildServer(addrs string) int {
	srv := localgrpc.NewServer(localgrpc.WithHealth())
	echov1.RegisterEchoServer(srv, &scriptSvc{})
	listv1.RegisterListStringsServer(srv, newBenchList())
	if err := srv.Listen(strings.Split(addrs, ",")...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	if err := srv.Serve(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childClientEnv makes the test binary a client of the address it holds
// that makes a unary call whose handler waits for its context and opens
// a bidirectional stream, says "calling" once the stream answered, and
// waits to be killed.
const childClientEnv = "LOCALGRPC_CHILD_CLIENT_ADDR"

func runChildClient(addr string) int {
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c := echov1.NewEchoClient(cc)
	go c.Get(context.Background(), &echov1.EchoRequest{Text: "wait"})
	s, err := c.Update(context.Background())
	if err == nil {
		err = s.Send(&echov1.EchoRequest{Text: "x"})
	}
	if err == nil {
		_, err = s.Recv()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("calling")
	select {}
}

// childProcess starts the test binary with env, waits for its first line
// to be want, and kills it when the test ends.
func childProcess(t testing.TB, env, want string) *os.Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != want {
		t.Fatalf("the child process did not start: %q, %v", line, err)
	}
	return cmd.Process
}

// childServer starts an Echo server (scriptSvc) on addrs in a child
// process, killed when the test ends.
func childServer(t testing.TB, addrs ...string) *os.Process {
	t.Helper()
	return childProcess(t, childServerEnv+"="+strings.Join(addrs, ","), "ready\n")
}

// childClient starts a client of addr in a child process (see
// runChildClient), killed when the test ends.
func childClient(t testing.TB, addr string) *os.Process {
	t.Helper()
	return childProcess(t, childClientEnv+"="+addr, "calling\n")
}
