package inproc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// The interop cases report failure through grpclog.Fatal, which exits the
// process. failLogger turns that into a panic the test recovers from.
type failLogger struct{ grpclog.LoggerV2 }

type interopFailure string

func (failLogger) Fatal(args ...any)   { panic(interopFailure(fmt.Sprint(args...))) }
func (failLogger) Fatalln(args ...any) { panic(interopFailure(fmt.Sprint(args...))) }
func (failLogger) Fatalf(format string, args ...any) {
	panic(interopFailure(fmt.Sprintf(format, args...)))
}
func (failLogger) FatalDepth(_ int, args ...any) { panic(interopFailure(fmt.Sprint(args...))) }
func (l failLogger) InfoDepth(int, ...any)       {}
func (l failLogger) WarningDepth(int, ...any)    {}
func (l failLogger) ErrorDepth(int, ...any)      {}

var interopCases = []struct {
	name string
	run  func(context.Context, testgrpc.TestServiceClient)
}{
	{"empty_unary", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoEmptyUnaryCall(ctx, c) }},
	{"large_unary", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoLargeUnaryCall(ctx, c) }},
	{"client_streaming", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoClientStreaming(ctx, c) }},
	{"server_streaming", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoServerStreaming(ctx, c) }},
	{"ping_pong", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoPingPong(ctx, c) }},
	{"empty_stream", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoEmptyStream(ctx, c) }},
	{"custom_metadata", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoCustomMetadata(ctx, c) }},
	{"status_code_and_message", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoStatusCodeAndMessage(ctx, c) }},
	{"special_status_message", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoSpecialStatusMessage(ctx, c) }},
	{"cancel_after_begin", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoCancelAfterBegin(ctx, c) }},
	{"cancel_after_first_response", func(ctx context.Context, c testgrpc.TestServiceClient) {
		interop.DoCancelAfterFirstResponse(ctx, c)
	}},
	{"timeout_on_sleeping_server", func(ctx context.Context, c testgrpc.TestServiceClient) {
		interop.DoTimeoutOnSleepingServer(ctx, c)
	}},
}

// TestInterop runs grpc-go's interop test cases through a Channel in every
// combination of copy mode and execution.
func TestInterop(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ch := inproc.New(mode.opts...)
			t.Cleanup(ch.Stop)
			testgrpc.RegisterTestServiceServer(ch, interop.NewTestServer())
			client := testgrpc.NewTestServiceClient(ch)
			for _, tc := range interopCases {
				t.Run(tc.name, func(t *testing.T) {
					defer func() {
						if r := recover(); r != nil {
							if msg, ok := r.(interopFailure); ok {
								t.Fatal(string(msg))
							}
							panic(r)
						}
					}()
					tc.run(t.Context(), client)
				})
			}
		})
	}
}
