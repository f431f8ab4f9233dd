package inproc_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// TestShareHandlerMapWriteWhileClientReads: the handler adds to a map
// of its request (plain Go) while the client reads its own message,
// which it may, since sending does not change it. Over grpc-go nothing
// is shared. With Share the map is the client's: the runtime may stop
// the process ("concurrent map read and map write"), and the race
// detector reports a race. Each mode runs in a child process, so that a
// crash is a failure, not the end of the test binary.
func TestShareHandlerMapWriteWhileClientReads(t *testing.T) {
	if os.Getenv("INPROC_SHARE_MAP_CHILD") != "" {
		t.Skip("child")
	}
	if err := mapWritesWhileClientReads(anyReference(t, mapWritingSvc())); err != nil {
		t.Fatalf("grpc-go: %v", err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestShareHandlerMapWriteChild$", "-test.count=1")
			// (The race detector sleeps a second at exit unless told not to.)
			cmd.Env = append(os.Environ(), "INPROC_SHARE_MAP_CHILD="+m.name, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				lines := crashLines(out)
				if lines == "" {
					lines = lastLines(out, 6)
				}
				t.Errorf("grpc-go OK, inproc child failed (%v):\n%s", err, lines)
			}
		})
	}
}

// TestShareHandlerMapWriteChild is the child process of
// TestShareHandlerMapWriteWhileClientReads: mapWritesWhileClientReads in
// the mode INPROC_SHARE_MAP_CHILD names.
func TestShareHandlerMapWriteChild(t *testing.T) {
	name := os.Getenv("INPROC_SHARE_MAP_CHILD")
	if name == "" {
		t.Skip("run by TestShareHandlerMapWriteWhileClientReads")
	}
	for _, m := range modes {
		if m.name == name {
			ch := newChannel(t, m)
			ch.RegisterService(anyDesc, mapWritingSvc())
			if err := mapWritesWhileClientReads(ch); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no mode %q", name)
}

// mapWritingSvc's handler writes into its request's map.
func mapWritingSvc() *anySvc {
	return &anySvc{newReq: func() proto.Message { return &open3.Tree{} }, resp: func(req proto.Message) (proto.Message, error) {
		tr := req.(*open3.Tree)
		if tr.ByName == nil {
			tr.ByName = map[string]*open3.Leaf{}
		}
		for i := range 50 {
			tr.ByName[fmt.Sprint("h", i)] = &open3.Leaf{}
		}
		return &emptypb.Empty{}, nil
	}}
}

// mapWritesWhileClientReads makes unary calls to mapWritingSvc while the
// client reads its own request, and fails if the client's map changed.
func mapWritesWhileClientReads(cc grpc.ClientConnInterface) error {
	req := &open3.Tree{ByName: map[string]*open3.Leaf{"client": {S: "c"}}}
	stop := meanwhileRead(func() {
		for k := range req.ByName {
			_ = k
		}
		_ = req.ByName["client"]
	})
	defer stop()
	for range 50 {
		if err := cc.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
			return err
		}
	}
	if len(req.ByName) != 1 {
		return fmt.Errorf("the client's map holds %d entries, sent with 1", len(req.ByName))
	}
	return nil
}

// lastLines returns the last n lines of out.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
