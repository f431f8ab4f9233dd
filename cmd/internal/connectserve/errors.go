package connectserve

import (
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/grpc/status"
)

// connectError turns a grpc-go status error into a connect-go error with
// the same code and message, so that clients of either stack see what a
// grpc-go server would have sent. Other errors pass as they are.
func connectError(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	if s, ok := status.FromError(err); ok {
		return connect.NewError(connect.Code(s.Code()), errors.New(s.Message()))
	}
	return err
}
