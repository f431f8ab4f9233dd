package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines to log
// to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServe runs `localgrpc serve args...` until the test ends and
// returns the addresses it says it serves on, its stderr and a function
// that stops it (as SIGINT would) and returns its exit status.
func startServe(t *testing.T, want int, args ...string) ([]string, *lockedBuffer, func() int) {
	t.Helper()
	ctx, interrupt := context.WithCancel(context.Background())
	stdoutR, stdoutW := io.Pipe()
	stderr := &lockedBuffer{}
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"serve"}, args...), nil, stdoutW, stderr)
		stdoutW.Close()
		exit <- code
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdoutR); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var addrs []string
	for len(addrs) < want {
		select {
		case line, ok := <-lines:
			if !ok {
				interrupt()
				t.Fatalf("serve exited with %d; stderr:\n%s", <-exit, stderr)
			}
			addr, ok := servedAddress(line)
			if !ok {
				interrupt()
				t.Fatalf("serve printed %q, not an address it serves", line)
			}
			addrs = append(addrs, addr)
		case <-time.After(10 * time.Second):
			interrupt()
			t.Fatalf("serve is not ready; stderr:\n%s", stderr)
		}
	}
	var once sync.Once
	var code int
	stop := func() int {
		once.Do(func() {
			interrupt()
			code = <-exit
			for range lines {
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	return addrs, stderr, stop
}

func TestServe(t *testing.T) {
	for _, stack := range []string{stackGRPC, stackConnect} {
		t.Run(stack, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "echo.sock")
			addrs, stderr, stop := startServe(t, 3, "--stack", stack, "-v", "127.0.0.1:0", "unix:"+sock, "unix:@localgrpc-test-"+rand.Text())
			if !strings.HasPrefix(addrs[0], "127.0.0.1:") || addrs[0] == "127.0.0.1:0" || addrs[1] != "unix:"+sock {
				t.Errorf("addresses %q", addrs)
			}
			for _, addr := range addrs {
				cc, err := localgrpc.NewClient(addr)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := echov1.NewEchoClient(cc).Get(t.Context(), &echov1.EchoRequest{Text: "hi " + addr})
				cc.Close()
				if err != nil || resp.GetText() != "hi "+addr {
					t.Errorf("grpc-go Get on %s: %v, %v", addr, resp, err)
				}
				if stack == stackConnect {
					hc, base, err := localgrpc.HTTPClient(addr)
					if err != nil {
						t.Fatal(err)
					}
					resp, err := echov1connect.NewEchoClient(hc, base).Get(t.Context(), connect.NewRequest(&echov1.EchoRequest{Text: "hi"}))
					hc.CloseIdleConnections()
					if err != nil || resp.Msg.GetText() != "hi" {
						t.Errorf("Connect Get on %s: %v, %v", addr, resp, err)
					}
				}
			}
			if code := stop(); code != exitOK {
				t.Errorf("exit status %d; stderr:\n%s", code, stderr)
			}
			if got := strings.Count(stderr.String(), "method=/echo.v1.Echo/Get code=OK"); got < len(addrs) {
				t.Errorf("-v logged %d calls, want %d at least:\n%s", got, len(addrs), stderr)
			}
			if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the socket file outlived the server: %v", err)
			}
		})
	}
}

func TestServeErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	abstract := "unix:@localgrpc-test-" + rand.Text()
	sock := filepath.Join(dir, "echo.sock")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve"}, exitUsage, "serve needs an ADDRESS to listen on: unix:PATH, unix:@NAME or HOST:PORT"},
		{[]string{"serve", abstract, abstract}, exitUsage, `address "` + abstract + `": given twice`},
		{[]string{"serve", "--stack", "connect", abstract, abstract}, exitUsage, `address "` + abstract + `": given twice`},
		{[]string{"serve", abstract, "unix-abstract:" + abstract[len("unix:@"):]}, exitUsage, `address "unix-abstract:` + abstract[len("unix:@"):] + `": the same address as "` + abstract + `"`},
		{[]string{"serve", "--stack", "connect", "unix:" + sock, "unix://" + sock}, exitUsage, `address "unix://` + sock + `": the same address as "unix:` + sock + `"`},
		{[]string{"serve", "127.0.0.1:0", "dns:///localhost:443"}, exitUsage, `address "dns:///localhost:443": a grpc-go target names servers to dial, not an address to listen on`},
		{[]string{"serve", "nosuch:x"}, exitUsage, `address "nosuch:x"`},
		{[]string{"serve", "127.0.0.1:99999"}, exitUsage, "99999"},
		{[]string{"serve", "--stack", "http", "127.0.0.1:0"}, exitUsage, `--stack "http": the stacks are grpc and connect`},
		{[]string{"serve", "unix:" + file}, exitFailure, "exists and is not a socket"},
		{[]string{"serve", "--stack", "connect", "unix:" + file}, exitFailure, "exists and is not a socket"},
		{[]string{"serve", "inproc:echo"}, exitUsage, `address "inproc:echo": no other process can reach an in-process address`},
		{[]string{"serve", "--stack", "connect", "inproc:echo"}, exitUsage, `address "inproc:echo": no other process can reach an in-process address`},
		{[]string{"serve", "inproc:echo"}, exitUsage, "serve on unix:@echo (abstract)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit status %d (want %d), stderr lacks %q:\n%s", code, tc.code, tc.want, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %s", stdout)
			}
		})
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a usage error left a socket behind: %v", err)
	}
}

// Port 0 twice is two ports, each its own, not an address given twice, on
// both stacks.
func TestServePortZeroTwice(t *testing.T) {
	for _, stack := range []string{stackGRPC, stackConnect} {
		t.Run("stack="+stack, func(t *testing.T) {
			addrs, _, _ := startServe(t, 2, "--stack", stack, "127.0.0.1:0", "127.0.0.1:0")
			if addrs[0] == addrs[1] || strings.HasSuffix(addrs[0], ":0") || strings.HasSuffix(addrs[1], ":0") {
				t.Errorf("addresses %q, want two ports", addrs)
			}
		})
	}
}
