package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
)

// TestCallCompressToPlainServer calls a connect server started without
// --compress with --compress, on every client stack that sends gzip: the
// error says to start the server with --compress.
func TestCallCompressToPlainServer(t *testing.T) {
	addr := serveEverywhere(t, stackConnect)["abstract"]
	for _, c := range []string{clientConnect, clientConnectGRPC, clientConnectGRPCWeb} {
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

// TestCodeOfCutStream checks that a connect stream cut mid-message, as
// connect-go reports it (InvalidArgument wrapping io.ErrUnexpectedEOF),
// counts as Unavailable, as grpc-go reports the same end.
func TestCodeOfCutStream(t *testing.T) {
	cut := connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("protocol error: incomplete envelope: %w", io.ErrUnexpectedEOF))
	if got := codeOf(cut); got != codes.Unavailable {
		t.Errorf("codeOf(a cut stream) = %v, want Unavailable", got)
	}
	bad := connect.NewError(connect.CodeInvalidArgument, errors.New("bad request"))
	if got := codeOf(bad); got != codes.InvalidArgument {
		t.Errorf("codeOf(an invalid argument) = %v, want InvalidArgument", got)
	}
}
