package callerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCodeOfCutStream checks that a connect stream cut mid-message, as
// connect-go reports it (InvalidArgument wrapping io.ErrUnexpectedEOF),
// counts as Unavailable, as grpc-go reports the same end.
func TestCodeOfCutStream(t *testing.T) {
	cut := connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("protocol error: incomplete envelope: %w", io.ErrUnexpectedEOF))
	if got := Code(cut); got != codes.Unavailable {
		t.Errorf("Code(a cut stream) = %v, want Unavailable", got)
	}
	bad := connect.NewError(connect.CodeInvalidArgument, errors.New("bad request"))
	if got := Code(bad); got != codes.InvalidArgument {
		t.Errorf("Code(an invalid argument) = %v, want InvalidArgument", got)
	}
}

// TestCodeOfOtherErrors checks the codes of errors that no stack made: a
// plain error is Unknown, a context's error is its gRPC code.
func TestCodeOfOtherErrors(t *testing.T) {
	if got := Code(errors.New("plain")); got != codes.Unknown {
		t.Errorf("Code(a plain error) = %v", got)
	}
	if got := Code(context.DeadlineExceeded); got != codes.DeadlineExceeded {
		t.Errorf("Code(context.DeadlineExceeded) = %v", got)
	}
	if got := Code(nil); got != codes.OK {
		t.Errorf("Code(nil) = %v", got)
	}
}

// TestMessage checks that the message of either stack's error is the
// server's text, without the code in front.
func TestMessage(t *testing.T) {
	for _, err := range []error{
		status.Error(codes.Unavailable, "down"),
		connect.NewError(connect.CodeUnavailable, errors.New("down")),
		errors.New("down"),
	} {
		if got := Message(err); got != "down" {
			t.Errorf("Message(%T) = %q, want %q", err, got, "down")
		}
	}
}
