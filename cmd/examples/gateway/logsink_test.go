package gateway_test

import (
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/grpclog"
)

// grpcLog receives what grpc-gateway logs through grpclog at ERROR, as
// grpclog's default logger would print it: the gateway logs there a
// response it could not write to a client that went away. A test that
// makes clients go away claims the log with routeGRPCLog, so that what is
// expected of it shows under the test's name in -v and nowhere else;
// whatever comes while no test claims it goes to stderr, as without this.
var grpcLog logSink

// installGRPCLog makes grpclog write to grpcLog. grpclog wants its logger
// set before any gRPC call, so TestMain does it.
func installGRPCLog() {
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, &grpcLog))
}

type logSink struct {
	mu sync.Mutex
	tb testing.TB // nil: stderr
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tb == nil {
		return os.Stderr.Write(p)
	}
	s.tb.Log("grpclog: " + strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// routeGRPCLog sends grpclog's errors to tb's log until tb ends.
func routeGRPCLog(tb testing.TB) {
	grpcLog.mu.Lock()
	grpcLog.tb = tb
	grpcLog.mu.Unlock()
	tb.Cleanup(func() {
		grpcLog.mu.Lock()
		grpcLog.tb = nil
		grpcLog.mu.Unlock()
	})
}
