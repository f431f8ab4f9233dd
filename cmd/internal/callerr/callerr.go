// Package callerr reads a call's error the same way on every client stack.
//
// grpc-go and connect-go report a failed call each in its own error type.
// Their status codes are the same numbers.
package callerr

import (
	"errors"
	"io"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Code is the status code of a call's error, on either stack.
// It is codes.OK for a nil error.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	if c := connect.CodeOf(err); c != connect.CodeUnknown {
		if c == connect.CodeInvalidArgument && errors.Is(err, io.ErrUnexpectedEOF) {
			// connect-go reads a stream cut mid-message (the server
			// stopped, a drain's deadline passed) as an invalid
			// envelope; grpc-go, which sees the transport end, says
			// Unavailable, and so does the CLI whatever the stack.
			return codes.Unavailable
		}
		return codes.Code(c)
	}
	return status.FromContextError(err).Code()
}

// Message is a call error's message without the code each stack puts in
// front of it.
func Message(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}
