package bench

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The cross-process impls serve the case's services from a server
// process: this program, started again with childEnv set to a
// childSpec, which serves until its standard input closes. The clients
// stay in this process. Their names start with "xproc-".
//
//   - xproc-unix and xproc-abstract: grpc-go's server and client over a
//     unix socket file and an abstract one, the reference.
//   - xproc-shm: localgrpc's shm: transport, a localgrpc.Server's shm:
//     address and localgrpc.NewClient.
//   - xproc-floor-socketpair and xproc-floor-ring: the machine's floor
//     between two processes, one round trip of the Echo text and no
//     gRPC at all: over a unix socketpair read through Go's netpoller,
//     and through a shared-memory ring each way woken by an eventfd (the
//     ring under shm:). Unary only.
const childEnv = "LOCALGRPC_BENCH_SERVER"

// childSpec is what a server process serves.
type childSpec struct {
	// Kind is "grpc" (grpc-go's server), "localgrpc" (localgrpc's),
	// "socketpair" or "ring" (a floor's echo).
	Kind string
	// Addr is where a server listens: "unix:PATH" or "unix:@NAME" for
	// grpc, any localgrpc address for localgrpc.
	Addr string
	// List is the shape of the ListStrings server.
	List listShape
}

// childReady is the line a server process writes once it serves.
const childReady = "ready"

// childStart bounds how long a server process may take to say it serves.
const childStart = 30 * time.Second

const (
	noXprocFanOut = "its backends are built in this process: a server process serves ListStrings and Echo only"
	noXprocOwn    = "a server process serves ListStrings and Echo only"
	noFloorStream = "the floor between processes is one round trip: see Unary"
)

var xprocSkips = map[string]string{FanOut: noXprocFanOut, Batching: noXprocOwn, Series: noXprocOwn}

var xprocFloorSkips = map[string]string{
	ListStrings: noFloorStream, PingPong: noFloorStream,
	FanOut: noXprocFanOut, Batching: noXprocOwn, Series: noXprocOwn,
}

// serveXprocUnix is impl "xproc-unix".
func serveXprocUnix(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	dir, err := os.MkdirTemp("", "localgrpc-bench-")
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { os.RemoveAll(dir) }) // after the server process ended
	path := filepath.Join(dir, "s.sock")
	if _, err := startChild(tb, childSpec{Kind: "grpc", Addr: "unix:" + path, List: shapeOf(srv)}); err != nil {
		return nil, err
	}
	return grpcClient(tb, "unix:"+path)
}

// serveXprocAbstract is impl "xproc-abstract".
func serveXprocAbstract(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	name := "localgrpc-bench-" + rand.Text()
	if _, err := startChild(tb, childSpec{Kind: "grpc", Addr: "unix:@" + name, List: shapeOf(srv)}); err != nil {
		return nil, err
	}
	return grpcClient(tb, "unix-abstract:"+name)
}

// serveXprocShm is impl "xproc-shm".
func serveXprocShm(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	addr := "shm:@localgrpc-bench-" + rand.Text()
	if _, err := startChild(tb, childSpec{Kind: "localgrpc", Addr: addr, List: shapeOf(srv)}); err != nil {
		return nil, err
	}
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { _ = cc.Close() })
	return cc, nil
}

func grpcClient(tb testing.TB, target string) (grpc.ClientConnInterface, error) {
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { _ = cc.Close() })
	return cc, nil
}

// shapeOf is the shape of srv's ListStrings server: none for a case that
// does not call it.
func shapeOf(srv servers) listShape {
	if l, ok := srv.list.(*listServer); ok {
		return l.shape
	}
	return listShape{}
}

// startChild starts a server process of spec, handing it files as its
// descriptors 3 and on, and returns once it serves. It ends in
// tb.Cleanup, before the cleanups registered after this call run: its
// standard input closes, and it is killed if it has not exited soon after.
func startChild(tb testing.TB, spec childSpec, files ...*os.File) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("a server process: %w", err)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	cmd.ExtraFiles = files
	cmd.SysProcAttr = childAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("a server process: %w", err)
	}
	ready := make(chan error, 1)
	exited := make(chan struct{}) // its standard output closed
	go func() {
		defer close(exited)
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		switch {
		case errors.Is(err, io.EOF):
			err = errors.New("it exited before it served")
		case err == nil && strings.TrimSpace(line) != childReady:
			err = fmt.Errorf("it said %q", line)
		}
		ready <- err
		io.Copy(io.Discard, r)
	}()
	end := func() error {
		stdin.Close()
		t := time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() })
		defer t.Stop()
		<-exited // Wait closes stdout: read it to its end first
		return cmd.Wait()
	}
	select {
	case err = <-ready:
	case <-time.After(childStart):
		err = fmt.Errorf("it did not say it serves within %v", childStart)
	}
	what := spec.Kind
	if spec.Addr != "" {
		what = spec.Addr
	}
	if err != nil {
		end()
		return nil, fmt.Errorf("a server process of %s: %w; its errors: %s", what, err, strings.TrimSpace(stderr.String()))
	}
	tb.Cleanup(func() {
		if err := end(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !exit.Exited() {
				tb.Errorf("the server process of %s: %v; its errors: %s", what, err, strings.TrimSpace(stderr.String()))
			}
		}
	})
	return cmd, nil
}
