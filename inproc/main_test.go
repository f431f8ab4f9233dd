package inproc_test

import (
	"os"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"go.uber.org/goleak"
	"google.golang.org/grpc/grpclog"
)

func TestMain(m *testing.M) {
	grpclog.SetLoggerV2(failLogger{grpclog.NewLoggerV2(os.Stderr, os.Stderr, os.Stderr)})
	goleak.VerifyTestMain(m)
}

// modes are the four combinations of copy mode and execution.
var modes = []struct {
	name string
	opts []inproc.Option
}{
	{"copy=clone/exec=isolated", []inproc.Option{inproc.WithCopy(inproc.Clone), inproc.WithExecution(inproc.Isolated)}},
	{"copy=share/exec=isolated", []inproc.Option{inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Isolated)}},
	{"copy=clone/exec=inline", []inproc.Option{inproc.WithCopy(inproc.Clone), inproc.WithExecution(inproc.Inline)}},
	{"copy=share/exec=inline", []inproc.Option{inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Inline)}},
}
