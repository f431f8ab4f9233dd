package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// --version prints the module's version, the revision and the stacks'
// versions; the build info of a test binary has no revision, so the
// pieces are checked on a made-up one.
func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "--version")
	if code != exitOK || !strings.HasPrefix(stdout, "localgrpc ") || stderr != "" {
		t.Errorf("exit status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	info := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/localgrpc/localgrpc/cmd", Version: "v0.3.0"},
		Deps: []*debug.Module{
			{Path: "google.golang.org/grpc", Version: "v1.75.0"},
			{Path: "connectrpc.com/connect", Version: "v1.18.1"},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "4636b52"}, {Key: "vcs.modified", Value: "true"}},
	}
	got := versionOf(info)
	for _, want := range []string{"v0.3.0", "4636b52", "modified", "grpc-go v1.75.0", "connect-go v1.18.1", "go1.26.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("version %q lacks %q", got, want)
		}
	}
}

// localgrpc without a command is a usage error: exit status 2, with the
// usage.
func TestNoCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context())
	if code != exitUsage || !strings.Contains(stderr, "command is required") || !strings.Contains(stderr, "Usage:") || stdout != "" {
		t.Errorf("exit status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}
