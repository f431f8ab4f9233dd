package main

import (
	"bytes"
	"context"
	"os"
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
// exits at once, however long the grace period.
func TestSecondSignalExits(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var stderr syncBuffer
	ctx := interruptible(context.Background(), sigs, func() time.Duration { return time.Hour }, &stderr, func(code int) { exited <- code })
	sigs <- os.Interrupt
	<-ctx.Done()
	select {
	case code := <-exited:
		t.Fatalf("exited with %d on the first signal", code)
	case <-time.After(10 * time.Millisecond):
	}
	sigs <- syscall.SIGTERM
	if code := <-exited; code != exitFailure {
		t.Errorf("exit status %d, want %d", code, exitFailure)
	}
	if !strings.Contains(stderr.String(), "again") {
		t.Errorf("stderr does not say why: %q", stderr.String())
	}
}

// A first signal alone exits once the grace period is over.
func TestGracePeriodExits(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	exited := make(chan int, 1)
	var stderr syncBuffer
	ctx := interruptible(context.Background(), sigs, func() time.Duration { return time.Millisecond }, &stderr, func(code int) { exited <- code })
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
