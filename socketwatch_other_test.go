//go:build !linux

package localgrpc_test

import "testing"

const watcherEnv = "LOCALGRPC_TEST_WATCH_SOCKETS"

func watchSockets(string) int { return 2 }

func TestSocketNeverWiderThanItsMode(t *testing.T) {
	t.Skip("the watcher uses inotify, which only Linux has")
}
