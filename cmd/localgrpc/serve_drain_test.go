package main

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc/status"
)

// TestServeDrainEnds holds an Update stream open on `localgrpc serve` and
// stops it: on either stack the drain ends at --drain-timeout, the held
// stream is ended, and serve exits cleanly, long before the test's bound.
func TestServeDrainEnds(t *testing.T) {
	const drain = 300 * time.Millisecond
	for _, stack := range []string{stackGRPC, stackConnect} {
		t.Run("stack="+stack, func(t *testing.T) {
			addrs, stderr, stop := startServe(t, 1, "--stack", stack, "--drain-timeout", drain.String(), "unix:@localgrpc-test-"+rand.Text())
			cc, err := localgrpc.NewClient(addrs[0])
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cc.Close() })
			held, err := echov1.NewEchoClient(cc).Update(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := held.Send(&echov1.EchoRequest{Text: "hold"}); err != nil {
				t.Fatal(err)
			}
			if _, err := held.Recv(); err != nil {
				t.Fatal(err)
			}

			exited := make(chan int, 1)
			start := time.Now()
			go func() { exited <- stop() }()
			select {
			case code := <-exited:
				if code != exitOK {
					t.Errorf("exit status %d; stderr:\n%s", code, stderr)
				}
			case <-time.After(10 * drain):
				t.Fatalf("serve still runs %v after the stop, with a drain timeout of %v", time.Since(start), drain)
			}
			// The one call the drain ended is counted in the log; the
			// count is the server's, so the test's own call is all of it.
			if log := stderr.String(); !strings.Contains(log, "drain timeout: ending the calls still in flight") || !strings.Contains(log, "calls=1 ") {
				t.Errorf("serve does not log that the drain timeout ended 1 call; stderr:\n%s", log)
			}
			if _, err := held.Recv(); err == nil {
				t.Error("the held stream goes on after serve exited")
			} else if s, ok := status.FromError(err); !ok {
				t.Errorf("the held stream ended with %v, not a status", err)
			} else if s.Code() == 0 {
				t.Errorf("the held stream ended with OK")
			}
		})
	}
}

// TestServeDrainTimeoutFlag checks that a negative --drain-timeout is a
// usage error.
func TestServeDrainTimeoutFlag(t *testing.T) {
	code, _, stderr := runCLI(t.Context(), "serve", "--drain-timeout", "-1s", "unix:@localgrpc-test-"+rand.Text())
	if code != exitUsage || !strings.Contains(stderr, "--drain-timeout") {
		t.Errorf("exit status %d (want %d), stderr:\n%s", code, exitUsage, stderr)
	}
}

// A drain that ends before --drain-timeout ends no call and says none.
func TestServeDrainQuiet(t *testing.T) {
	for _, stack := range []string{stackGRPC, stackConnect} {
		t.Run("stack="+stack, func(t *testing.T) {
			_, stderr, stop := startServe(t, 1, "--stack", stack, "--drain-timeout", "10s", "unix:@localgrpc-test-"+rand.Text())
			if code := stop(); code != exitOK {
				t.Errorf("exit status %d; stderr:\n%s", code, stderr)
			}
			if strings.Contains(stderr.String(), "drain timeout") {
				t.Errorf("serve says the drain timeout ended calls when none were in flight:\n%s", stderr)
			}
		})
	}
}
