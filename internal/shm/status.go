package shm

import (
	"encoding/binary"
	"fmt"

	"github.com/localgrpc/localgrpc/internal/shmwire"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// trailersFrame is the Trailers frame that ends stream id with err's
// status (nil: OK) and the trailer md. The content-type the channel put
// in md stays behind: the client's channel adds its own.
func trailersFrame(id uint32, err error, md metadata.MD) []byte {
	w := shmwire.Status{MD: md, Skip: "content-type"}
	if err != nil {
		st := status.Convert(err)
		w.Code, w.Message = st.Code(), st.Message()
		if p := st.Proto(); len(p.GetDetails()) > 0 {
			if b, err := proto.Marshal(p); err == nil {
				w.Details = b
			}
		}
	}
	return appendPayloadFrame(nil, id, shmwire.Trailers, w.Append)
}

// headersFrame appends the Headers frame of the response header md to b,
// without the content-type, which the client's channel adds.
func headersFrame(b []byte, id uint32, md metadata.MD) []byte {
	return appendPayloadFrame(b, id, shmwire.Headers, func(b []byte) []byte {
		return shmwire.AppendMDWithout(b, md, "content-type")
	})
}

// appendPayloadFrame appends a frame whose payload payload appends in
// place.
func appendPayloadFrame(b []byte, id uint32, t shmwire.Type, payload func([]byte) []byte) []byte {
	start := len(b)
	b = shmwire.Header{Stream: id, Type: t}.Append(b)
	b = payload(b)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-shmwire.HeaderLen))
	return b
}

// okStatus is every OK status without a message.
var okStatus = status.New(codes.OK, "")

// statusOf is the status a Trailers frame carries. Details that do not
// parse, or do not agree with the code, fail the call with Internal, as
// grpc-go's client does with a grpc-status-details-bin it cannot use.
func statusOf(w shmwire.Status) *status.Status {
	if w.Code == codes.OK && w.Message == "" && len(w.Details) == 0 {
		return okStatus
	}
	if len(w.Details) == 0 {
		return status.New(w.Code, w.Message)
	}
	p := new(spb.Status)
	if err := proto.Unmarshal(w.Details, p); err != nil {
		return status.Newf(codes.Internal, "shm: the server's status details do not parse: %v", err)
	}
	if codes.Code(p.GetCode()) != w.Code {
		return status.Newf(codes.Internal, "shm: the server's status details say code %d, its status %d", p.GetCode(), w.Code)
	}
	return status.FromProto(p)
}

// errFrom is a breach of the framing by the peer: the connection ends.
func errFrom(format string, args ...any) error {
	return fmt.Errorf("shm: "+format, args...)
}
