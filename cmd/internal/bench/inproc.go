package bench

import (
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// serveInproc returns the serve function of the impl "inproc-COPY-EXEC":
// this project's in-process channel in one of its four modes.
func serveInproc(mode inproc.CopyMode, exec inproc.Execution) func(testing.TB, servers) (grpc.ClientConnInterface, error) {
	return func(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
		ch := inproc.New(inproc.WithCopy(mode), inproc.WithExecution(exec))
		srv.registerOn(ch)
		// Stop, not GracefulStop: the workloads have ended their calls by
		// now, and a case that failed mid-call must not hang the suite.
		tb.Cleanup(ch.Stop)
		return ch, nil
	}
}
