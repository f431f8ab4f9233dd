package vtzoo_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/cmd/internal/vtzoo"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
)

// A bidi stream of Leaf, a message of vtprotobuf's that inproc's plans
// copy with Clone (every field known) and whose copies the receiver gives
// back for reuse: the sender changes one Leaf's bytes in place between
// sends, each receiver keeps every message, a part of its bytes, and
// changes every other one; what each holds at the end is what grpc-go's
// receivers hold.

var leafBidiDesc = grpc.StreamDesc{StreamName: "Leaves", ServerStreams: true, ClientStreams: true}

func leafSend(n int, send func(any) error) error {
	l := &vtzoo.Leaf{B: make([]byte, 6)}
	for i := range n {
		l.D, l.S = float64(i), fmt.Sprint("s", i)
		for j := range l.B {
			l.B[j] = byte(i * (j + 1))
		}
		l.B = l.B[:3+i%4]
		if err := send(l); err != nil {
			return err
		}
		l.B = l.B[:6]
	}
	return nil
}

type leafKept struct {
	l    *vtzoo.Leaf
	part []byte
}

func leafRecv(i int, recv func(any) error) (leafKept, error) {
	l := &vtzoo.Leaf{}
	if err := recv(l); err != nil {
		return leafKept{}, err
	}
	k := leafKept{l: l, part: l.B[1:3]}
	if i%2 == 0 {
		l.B[0] ^= 0xff
		k.part[1] = 0xee // before the append, which may or may not reallocate
		l.B = append(l.B, 0xaa)
	}
	return k, nil
}

func leafDump(ks []leafKept) string {
	var b strings.Builder
	for i, k := range ks {
		fmt.Fprintf(&b, "%d: %s part %x\n", i, wireOf(k.l), k.part)
	}
	return b.String()
}

func leafDesc(n int, done chan<- string) *grpc.ServiceDesc {
	d := leafBidiDesc
	d.Handler = func(_ any, ss grpc.ServerStream) error {
		var ks []leafKept
		i := 0
		err := leafSend(n, func(m any) error {
			k, err := leafRecv(i, ss.RecvMsg)
			if err != nil {
				return err
			}
			i++
			ks = append(ks, k)
			return ss.SendMsg(m)
		})
		done <- leafDump(ks)
		return err
	}
	return &grpc.ServiceDesc{ServiceName: "vtzoo.Keep", HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{d}}
}

func leafRun(t *testing.T, cc grpc.ClientConnInterface, n int, done chan string) string {
	cs, err := cc.NewStream(context.Background(), &leafBidiDesc, "/vtzoo.Keep/Leaves")
	if err != nil {
		t.Fatal(err)
	}
	var ks []leafKept
	i := 0
	err = leafSend(n, func(m any) error {
		if err := cs.SendMsg(m); err != nil {
			return err
		}
		k, err := leafRecv(i, cs.RecvMsg)
		i++
		ks = append(ks, k)
		return err
	})
	if err == nil {
		err = cs.CloseSend()
	}
	if err == nil {
		if err = cs.RecvMsg(&vtzoo.Leaf{}); errors.Is(err, io.EOF) {
			err = nil
		}
	}
	return fmt.Sprintf("err=%v\nclient:\n%shandler:\n%s", err, leafDump(ks), <-done)
}

func TestVTProtoStreamReceiversKeep(t *testing.T) {
	const n = 50
	done := make(chan string, 1)
	cc := servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { r.RegisterService(leafDesc(n, done), struct{}{}) }, nil)
	want := leafRun(t, cc, n, done)
	for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
		ch := inproc.New(inproc.WithCopy(inproc.Clone), inproc.WithExecution(exec))
		ch.RegisterService(leafDesc(n, done), struct{}{})
		if got := leafRun(t, ch, n, done); got != want {
			t.Errorf("exec=%v:\ninproc\n%s\ngrpc-go\n%s", exec, got, want)
		}
		ch.Stop()
	}
}
