package inproc

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The channel's own ends of a call.
var (
	// errStopped ends every call of a stopped channel.
	errStopped = status.Error(codes.Unavailable, "inproc: the channel is stopped")

	// errClientGone ends the handler's side of a call its client left.
	errClientGone = status.Error(codes.Canceled, "inproc: the client is gone")

	// errHandlerPanicked ends a call whose Inline handler panicked. The
	// panic goes on to the caller, whose goroutine ran the handler. The
	// call ends with it, counted out, in case the caller recovers.
	errHandlerPanicked = status.Error(codes.Internal, "inproc: the handler panicked")
)

// grpc-go's server transport's errors, which a handler's writes report.
var (
	// transportClosing is what it reports for a write on a closed
	// connection.
	transportClosing    = status.New(codes.Unavailable, "transport is closing")
	errTransportClosing = transportClosing.Err()

	// errHeaderSent is what a second SendHeader reports.
	errHeaderSent = status.Error(codes.Internal, "transport: SendHeader called multiple times")

	// errHeaderWrite is what setting a header or trailer reports once the
	// call is over for the handler (the client left, the deadline passed,
	// the status went out).
	errHeaderWrite = status.Error(codes.Internal, "transport: the stream is done or WriteHeader was already called")
)

// Errors for what gRPC forbids and a stream cannot survive.
var (
	errSendAfterCloseSend = status.Error(codes.Internal, "SendMsg called after CloseSend")
	errSendAfterReturn    = status.Error(codes.Internal, "inproc: SendMsg called after the handler returned")
	errConcurrentSend     = status.Error(codes.Internal, "inproc: SendMsg called from two goroutines at once on one side of a stream; gRPC allows one sender at a time")
	errConcurrentRecv     = status.Error(codes.Internal, "inproc: RecvMsg called from two goroutines at once on one side of a stream; gRPC allows one receiver at a time")
)

// Cardinality violations, in grpc-go's words (stream.go).
var (
	// errNoResponse ends a unary call whose OK status came without a
	// response (csAttempt.recvMsg).
	errNoResponse = status.Error(codes.Internal, "cardinality violation: received no response message from non-server-streaming RPC")

	// errExtraResponse ends a client's call that is not server-streaming
	// and received a second response.
	errExtraResponse = status.Error(codes.Internal, "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message")

	// errNoRequest is what a handler of a call that is not
	// client-streaming receives when no request came.
	errNoRequest = status.Error(codes.Internal, "cardinality violation: received no request message from non-client-streaming RPC")

	// errExtraRequest is what a handler of a call that is not
	// client-streaming receives when a second request came.
	errExtraRequest = status.Error(codes.Internal, "cardinality violation: received multiple request messages for non-client-streaming RPC")
)
