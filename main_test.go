package localgrpc_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The test binary doubles as the watcher of another user that
	// TestSocketNeverWiderThanItsMode runs.
	if dir := os.Getenv(watcherEnv); dir != "" {
		os.Exit(watchSockets(dir))
	}
	if addrs := os.Getenv(childServerEnv); addrs != "" {
		os.Exit(runChildServer(addrs))
	}
	if addr := os.Getenv(childClientEnv); addr != "" {
		os.Exit(runChildClient(addr))
	}
	goleak.VerifyTestMain(m)
}
