package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve with a call in flight: SIGINT, then a second SIGINT a second
// later, stops at once (exit 1) — and leaves its unix socket file behind,
// which the graceful stop removes. A stop at once should still remove
// the socket it made (the next serve replaces a stale one, but ss, ls
// and clients see a server that is not there).
func TestAttack36SecondInterruptLeavesSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "serve", "--drain-timeout", "20s", "unix:"+path)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || !strings.Contains(sc.Text(), path) {
		t.Fatalf("serve printed %q; stderr:\n%s", sc.Text(), stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	// A call that stays in flight: update with its stdin open.
	in, inW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan struct{})
	go func() {
		defer close(called)
		runCLIWithInput(ctx, in, "call", "update", "--address", "unix:"+path, "-d", "-")
	}()
	defer func() { inW.Close(); cancel(); <-called }()
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailure {
		t.Fatalf("serve: %v, want exit status %d; stderr:\n%s", err, exitFailure, stderr.String())
	}
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("the socket file %s is left after serve stopped at once; stderr:\n%s", path, stderr.String())
	}
}
