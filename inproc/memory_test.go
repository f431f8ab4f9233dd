package inproc_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestDeliveredMessagesNotRetained: a server stream sends 60 messages
// of 1 MiB, one at a time; the client receives each and drops it; then the
// stream stays open (the handler waits). The byte window (1 MiB by
// default) is meant to bound what a stream holds, and over grpc-go a
// message the application has received and dropped is garbage. inproc's
// queue keeps every delivered message in its slot until the slot is
// reused ("A slot keeps its message until it is reused"), so an idle
// stream pins up to window (64) already-delivered messages: here ~60 MiB
// per stream, whatever WithWindowBytes says.
func TestDeliveredMessagesNotRetained(t *testing.T) {
	const (
		n    = 60
		size = 1 << 20
	)
	run := func(t *testing.T, c echov1.EchoClient, release chan struct{}) uint64 {
		before := heapInUse()
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if _, err := s.Recv(); err != nil {
				t.Fatalf("Recv %d: %v", i, err)
			}
		}
		after := heapInUse()
		close(release)
		for {
			if _, err := s.Recv(); err != nil {
				break
			}
		}
		if after < before {
			return 0
		}
		return after - before
	}
	handler := func(release chan struct{}) *funcEcho {
		return &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			for range n {
				if err := s.Send(&echov1.EchoResponse{Text: strings.Repeat("m", size)}); err != nil {
					return err
				}
			}
			<-release
			return nil
		}}
	}
	release := make(chan struct{})
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, handler(release)) }, nil, nil))
	refHeld := run(t, ref, release)
	t.Logf("grpc-go: the open stream holds %d MiB", refHeld>>20)
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("an Inline handler blocked on release blocks its caller")
		}
		release := make(chan struct{})
		c, _ := newEcho(t, m, handler(release), inproc.WithWindowBytes(1<<20))
		held := run(t, c, release)
		if held > refHeld+16<<20 {
			t.Errorf("the open stream holds %d MiB of messages its client received and dropped; grpc-go holds %d MiB; the byte window is 1 MiB", held>>20, refHeld>>20)
		}
	})
}

// freshDescriptor builds, anew, a proto3 file holding message
// attack2.Req { string text = 1; }: what a proxy that resolves
// descriptors per request (through server reflection, say) sends.
func freshDescriptor(t *testing.T, i int) protoreflect.MessageDescriptor {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String(fmt.Sprintf("attack2/fresh%d.proto", i)),
		Package: proto.String("attack2"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Req"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name:     proto.String("text"),
				Number:   proto.Int32(1),
				Type:     descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				JsonName: proto.String("text"),
			}},
		}},
	}
	fd, err := protodesc.NewFile(fdp, new(protoregistry.Files))
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

// TestFreshDescriptorsNotRetained: a client sends dynamic messages
// whose descriptors it builds per call, then drops them. Over grpc-go
// nothing of a call is kept once it ends; inproc keeps, per Go type and
// descriptor, the plans it made (typedPlans, utf8Plans: package-level
// sync.Maps keyed by planKey{Go type, descriptor}), each holding the
// descriptor and through it its whole file, for ever, even past the
// Channel's Stop: about 3.5 KB a call here, without bound.
func TestFreshDescriptorsNotRetained(t *testing.T) {
	const n = 3000
	ch := newChannel(t, modes[0])
	ch.RegisterService(anyDesc, &anySvc{newReq: func() proto.Message { return &emptypb.Empty{} }})
	call := func(i int) {
		md := freshDescriptor(t, i)
		req := dynamicpb.NewMessage(md)
		req.Set(md.Fields().ByNumber(1), protoreflect.ValueOfString("hello"))
		if err := ch.Invoke(context.Background(), anyUnary, req, &emptypb.Empty{}); err != nil {
			t.Fatal(err)
		}
	}
	call(-1)
	before := heapInUse()
	for i := range n {
		call(i)
	}
	after := heapInUse()
	grown := int64(after) - int64(before)
	t.Logf("heap grew by %d bytes over %d calls (%d a call)", grown, n, grown/n)
	if grown > 1<<20 {
		t.Errorf("heap grew by %d KiB over %d calls, each of whose descriptors the client dropped (%d bytes a call)", grown>>10, n, grown/n)
	}
}
