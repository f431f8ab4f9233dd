package gateway

import (
	"context"
	"strconv"

	greeterv1 "github.com/localgrpc/localgrpc/cmd/examples/gateway/gen/greeter/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Greeter is the GreeterService: Greet greets a name, GreetMany streams
// count numbered greetings of it. Both send a header (x-greeter) and set
// a trailer (x-greetings, how many were sent). grpc-gateway forwards the
// header as Grpc-Metadata-X-Greeter, and a unary call's trailer, to a
// client that asked for trailers (TE: trailers), as the HTTP trailer
// Grpc-Trailer-X-Greetings; it forwards no trailers of streams. A
// request without a name, or with a count below 1, fails with
// InvalidArgument and a google.rpc.BadRequest naming the field, which
// grpc-gateway maps to HTTP 400 with the details in the body.
type Greeter struct {
	greeterv1.UnimplementedGreeterServiceServer
}

var _ greeterv1.GreeterServiceServer = Greeter{}

// header is what both methods send as response headers: a new map each
// time, since the layers below may keep or change what they are given.
func header() metadata.MD { return metadata.Pairs("x-greeter", "localgrpc") }

// Greet greets req's name.
func (Greeter) Greet(ctx context.Context, req *greeterv1.GreetRequest) (*greeterv1.GreetResponse, error) {
	if err := checkName(req.GetName()); err != nil {
		return nil, err
	}
	if err := grpc.SendHeader(ctx, header()); err != nil {
		return nil, err
	}
	if err := grpc.SetTrailer(ctx, greetings(1)); err != nil {
		return nil, err
	}
	return &greeterv1.GreetResponse{Greeting: greeting(req.GetName())}, nil
}

// GreetMany streams req's count greetings of its name. It ends early,
// with the stream's error, if the client goes away.
func (Greeter) GreetMany(req *greeterv1.GreetManyRequest, stream grpc.ServerStreamingServer[greeterv1.GreetManyResponse]) error {
	if err := checkName(req.GetName()); err != nil {
		return err
	}
	if req.GetCount() < 1 {
		return invalid("count", "must be at least 1")
	}
	if err := stream.SendHeader(header()); err != nil {
		return err
	}
	text := greeting(req.GetName())
	var sent int32
	// The trailer counts what was sent, however the stream ends.
	defer func() { stream.SetTrailer(greetings(sent)) }()
	for sent < req.GetCount() {
		if err := stream.Send(&greeterv1.GreetManyResponse{Number: sent + 1, Greeting: text}); err != nil {
			return err
		}
		sent++
	}
	return nil
}

func greeting(name string) string { return "Hello, " + name + "!" }

func greetings(n int32) metadata.MD {
	return metadata.Pairs("x-greetings", strconv.Itoa(int(n)))
}

func checkName(name string) error {
	if name == "" {
		return invalid("name", "must not be empty")
	}
	return nil
}

// invalid is InvalidArgument with a BadRequest detail naming field, as
// Google's API design guide has it, so that a REST client learns which
// field to fix.
func invalid(field, description string) error {
	st, err := status.New(codes.InvalidArgument, field+" "+description).WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: description}},
	})
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return st.Err()
}
