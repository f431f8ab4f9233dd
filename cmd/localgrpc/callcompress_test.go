package main

import (
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
)

// TestCallCompressToPlainServer calls a connect server started without
// --compress with --compress, on every client stack that sends gzip: the
// error says to start the server with --compress.
func TestCallCompressToPlainServer(t *testing.T) {
	addr := serveEverywhere(t, stackConnect)["abstract"]
	for _, c := range []string{echoclient.Connect, echoclient.ConnectGRPC, echoclient.ConnectGRPCWeb} {
		code, _, stderr := runCLI(t.Context(), "call", "get", "--address", addr, "--stack", c, "--compress", "-m", "x")
		if code == exitOK {
			t.Errorf("--stack %s --compress to a server without it succeeded", c)
			continue
		}
		if !strings.Contains(stderr, "--compress") || !strings.Contains(stderr, "serve --compress") {
			t.Errorf("--stack %s: exit %d, stderr %q; want it to say to start the server with --compress", c, code, stderr)
		}
	}
}
