package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// childEnv, set to 1 in a process's environment, makes it a child of a
// localgrpc process, such as a server process of `measure
// --server-process`: the same binary, re-executed, that runs the command
// line it is given until a signal comes or its standard input closes, as
// it does when the parent closes it or exits, however it exits. An
// environment variable rather than a subcommand, so that the test binary,
// re-executed as it is, runs the command line too, and main is left as it
// is.
const childEnv = "LOCALGRPC_CHILD"

func init() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	// Not inherited by the processes the child starts.
	os.Unsetenv(childEnv)
	os.Exit(runChild(os.Args[1:]))
}

// runChild runs the command line args until a signal comes or standard
// input closes.
func runChild(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return run(ctx, args, nil, os.Stdout, os.Stderr)
}

// serverProcess is a child process serving Echo, as serve does.
type serverProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *cappedBuffer
	exited chan struct{} // closed once the process has been waited for
	err    error         // Wait's, once exited is closed
}

// childDrain is how long a server process waits for calls in flight when
// told to stop: measure stops it after its last call.
const childDrain = time.Second

// startServerProcess starts a server process of stack (serve --stack) on
// the addresses listen and returns it with the addresses it serves, TCP
// ports resolved, once it serves them all.
func startServerProcess(stack string, compress bool, listen []string) (*serverProcess, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("a server process: %w", err)
	}
	args := []string{"serve", "--stack", stack, "--drain-timeout", childDrain.String()}
	if compress {
		args = append(args, "--compress")
	}
	cmd := exec.Command(exe, append(args, listen...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	// The child ends with this process: on Linux when it dies (the kernel
	// signals the child), and anywhere when its standard input closes,
	// which the kernel does when this process exits, however it exits.
	cmd.SysProcAttr = serverProcessAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	lines := &servedLines{addrs: make(chan string, len(listen))}
	cmd.Stdout = lines
	p := &serverProcess{cmd: cmd, stdin: stdin, stderr: &cappedBuffer{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	started := make(chan error)
	go func() {
		// On Linux the child is signalled when the thread that started
		// it ends: this goroutine holds that thread, which runs no other
		// goroutine, until the child has exited.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		stdin.Close()
		return nil, nil, fmt.Errorf("a server process: %w", err)
	}

	var addrs []string
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for len(addrs) < len(listen) {
		select {
		case a := <-lines.addrs:
			addrs = append(addrs, a)
		case <-p.exited:
			return nil, nil, fmt.Errorf("the %s server process (pid %d) exited before it served: %v\n%s", stack, cmd.Process.Pid, p.err, strings.TrimSpace(p.stderr.String()))
		case <-timeout.C:
			p.stop()
			return nil, nil, fmt.Errorf("the %s server process (pid %d) did not serve within 30s\n%s", stack, cmd.Process.Pid, strings.TrimSpace(p.stderr.String()))
		}
	}
	return p, addrs, nil
}

// pid is the server process's.
func (p *serverProcess) pid() int { return p.cmd.Process.Pid }

// stop tells the server process to stop, by closing its standard input,
// and waits until it has exited, killing it if it has not within its
// drain and a margin. It returns what went wrong, if anything.
func (p *serverProcess) stop() error {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(childDrain + 5*time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("the server process (pid %d) did not stop when told; killed", p.pid())
	}
	if p.err != nil {
		return fmt.Errorf("the server process (pid %d): %v\n%s", p.pid(), p.err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}

// servedLines is a server process's standard output: it sends the
// address of each line serve prints for one on addrs, and drops the rest.
type servedLines struct {
	buf   []byte
	addrs chan string
}

func (s *servedLines) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		if a, ok := servedAddress(string(s.buf[:i])); ok {
			select {
			case s.addrs <- a:
			default: // more addresses than asked for: not this child's
			}
		}
		s.buf = s.buf[i+1:]
	}
	return len(p), nil
}

// cappedBuffer keeps the first max bytes written to it, safely for
// concurrent use.
type cappedBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
