package echotest

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// ListServices asks the server reflection service at cc for the names of
// the services it serves, and returns them sorted.
func ListServices(ctx context.Context, cc grpc.ClientConnInterface) ([]string, error) {
	s, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer s.CloseSend()
	if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		return nil, err
	}
	r, err := s.Recv()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, svc := range r.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	slices.Sort(names)
	return names, nil
}
