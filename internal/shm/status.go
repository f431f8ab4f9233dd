package shm

import (
	"fmt"

	"github.com/localgrpc/localgrpc/internal/shmwire"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// trailersFrame is the Trailers frame that ends stream id with st and the
// trailer md.
func trailersFrame(id uint32, st *status.Status, md metadata.MD) []byte {
	w := shmwire.Status{Code: st.Code(), Message: st.Message(), MD: md}
	if p := st.Proto(); len(p.GetDetails()) > 0 {
		if b, err := proto.Marshal(p); err == nil {
			w.Details = b
		}
	}
	return shmwire.AppendFrame(nil, id, shmwire.Trailers, 0, w.Append(nil))
}

// statusOf is the status a Trailers frame carries. Details that do not
// parse, or do not agree with the code, fail the call with Internal, as
// grpc-go's client does with a grpc-status-details-bin it cannot use.
func statusOf(w shmwire.Status) *status.Status {
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
