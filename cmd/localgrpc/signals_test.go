package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a goroutine's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The first signal ends the context, for a graceful end; a second one
// after the same-interrupt interval exits at once, however long the grace
// period.
func TestSecondSignalExits(t *testing.T) {
	const same = 20 * time.Millisecond
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var stderr syncBuffer
	ctx := interruptible(context.Background(), sigs, same, func() time.Duration { return time.Hour }, &stderr, func(code int) { exited <- code })
	sigs <- os.Interrupt
	<-ctx.Done()
	select {
	case code := <-exited:
		t.Fatalf("exited with %d on the first signal", code)
	case <-time.After(5 * same):
	}
	sigs <- syscall.SIGTERM
	if code := <-exited; code != exitFailure {
		t.Errorf("exit status %d, want %d", code, exitFailure)
	}
	if !strings.Contains(stderr.String(), "again") {
		t.Errorf("stderr does not say why: %q", stderr.String())
	}
}

// Signals that come together, as coreutils' timeout sends them (to the
// command, then to its process group), are one interrupt: the work ends
// gracefully, and only the grace period, not a "second" signal, exits.
func TestSignalsTogetherAreOne(t *testing.T) {
	sigs := make(chan os.Signal, 3)
	exited := make(chan int, 1)
	var stderr syncBuffer
	ctx := interruptible(context.Background(), sigs, time.Hour, func() time.Duration { return 100 * time.Millisecond }, &stderr, func(code int) { exited <- code })
	sigs <- os.Interrupt
	sigs <- os.Interrupt
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	if code := <-exited; code != exitFailure {
		t.Errorf("exit status %d, want %d", code, exitFailure)
	}
	if got := stderr.String(); strings.Contains(got, "again") || !strings.Contains(got, "after the interrupt") {
		t.Errorf("signals sent together were taken as a second interrupt: %q", got)
	}
}

// A first signal alone exits once the grace period is over.
func TestGracePeriodExits(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	exited := make(chan int, 1)
	var stderr syncBuffer
	ctx := interruptible(context.Background(), sigs, sameInterrupt, func() time.Duration { return time.Millisecond }, &stderr, func(code int) { exited <- code })
	sigs <- os.Interrupt
	<-ctx.Done()
	if code := <-exited; code != exitFailure {
		t.Errorf("exit status %d, want %d", code, exitFailure)
	}
	if !strings.Contains(stderr.String(), "after the interrupt") {
		t.Errorf("stderr does not say why: %q", stderr.String())
	}
}

// The grace period covers what the command's flags let its work take to
// end.
func TestGraceCoversFlags(t *testing.T) {
	defer grace.Store(int64(defaultGrace))
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"bench", "--benchtime", "1m"}, defaultGrace + time.Minute},
		{[]string{"bench", "--benchtime", "100x"}, defaultGrace},
		{[]string{"serve", "--drain-timeout", "30s"}, defaultGrace + 30*time.Second},
	} {
		cmd, rest, err := newRootCmd().Find(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		lengthenGrace(cmd)
		if got := interruptGrace(); got != tc.want {
			t.Errorf("%s: grace %v, want %v", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestTimeoutInterruptReports runs bench under coreutils' timeout -s INT,
// which signals the command and then its process group: the command sees
// one signal or two microseconds apart, as the kernel merges them or not
// (about 1 run in 10 saw two). Every run must report what it measured.
func TestTimeoutInterruptReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench under timeout several times")
	}
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("no coreutils timeout")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const runs = 6
	for i := range runs {
		// 100 runs of 40 ms: the interrupt comes long before the end.
		cmd := exec.CommandContext(t.Context(), timeout, "--preserve-status", "-s", "INT", "1.5", exe,
			"bench", "--quick", "--workload", "^Unary$", "--impl", "^localhost$", "--count", "100")
		cmd.Env = append(os.Environ(), asMainEnv+"=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitFailure {
			t.Fatalf("run %d: %v, want exit status %d; stderr:\n%s", i, err, exitFailure, &stderr)
		}
		if strings.Contains(stderr.String(), "stopping at once") || !strings.Contains(stderr.String(), "interrupted after") {
			t.Errorf("run %d: timeout's interrupt was taken as two; stderr:\n%s", i, &stderr)
		}
		if !strings.Contains(stdout.String(), "Unary (GOMAXPROCS") {
			t.Errorf("run %d: no report of the runs that finished; stdout:\n%s\nstderr:\n%s", i, &stdout, &stderr)
		}
	}
}
