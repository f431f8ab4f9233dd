package shm

import (
	"bytes"
	"io"
	"net"
	"time"

	"github.com/localgrpc/localgrpc/internal/shmwire"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// refuseHTTP2 answers a client that began HTTP/2's preface (grpc-go,
// grpcurl, any other gRPC client) as a gRPC server would a call it
// cannot take: every stream it opens ends at once with Unavailable and a
// message that says what this socket is, so that the client's error
// says it rather than waiting or reporting a malformed frame. It answers
// for a second, then closes.
func refuseHTTP2(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(time.Second))
	// The first bytes of the preface are read: the rest of it.
	rest := make([]byte, len(http2.ClientPreface)-shmwire.HelloHeadLen)
	if _, err := io.ReadFull(nc, rest); err != nil {
		return
	}
	f := http2.NewFramer(nc, nc)
	if f.WriteSettings() != nil {
		return
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for {
		fr, err := f.ReadFrame()
		if err != nil {
			return
		}
		switch fr := fr.(type) {
		case *http2.SettingsFrame:
			if !fr.IsAck() && f.WriteSettingsAck() != nil {
				return
			}
		case *http2.PingFrame:
			if !fr.IsAck() && f.WritePing(true, fr.Data) != nil {
				return
			}
		case *http2.HeadersFrame:
			hb.Reset()
			for _, h := range [][2]string{{":status", "200"}, {"content-type", "application/grpc"}, {"grpc-status", "14"}, {"grpc-message", notHTTP2}} {
				enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
			}
			if f.WriteHeaders(http2.HeadersFrameParam{StreamID: fr.StreamID, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}) != nil {
				return
			}
		}
	}
}

// notHTTP2 is a grpc-message: printable ASCII, no '%'.
const notHTTP2 = "this socket serves localgrpc's shm: transport, not HTTP/2: dial it with localgrpc.NewClient(\"shm:...\"), or serve grpc-go clients on a unix: address"
