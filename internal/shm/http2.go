package shm

import (
	"io"
	"net"
	"time"

	"golang.org/x/net/http2"
)

// refuseHTTP2 answers a client that began HTTP/2's preface (grpc-go,
// grpcurl, any other gRPC client) with a GOAWAY whose debug data says
// what this socket is, so that the client's error says it rather than
// waiting or reporting a malformed frame. It reads what the client sends
// for a second, so that closing the socket does not reset it before the
// client read the GOAWAY.
func refuseHTTP2(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(time.Second))
	f := http2.NewFramer(nc, nil)
	f.WriteSettings()
	f.WriteGoAway(0, http2.ErrCodeHTTP11Required, []byte(notHTTP2))
	io.Copy(io.Discard, nc)
}

const notHTTP2 = "this socket serves localgrpc's shm: transport, not HTTP/2: dial it with localgrpc.NewClient(\"shm:...\"), or serve grpc-go clients on a unix: address"
