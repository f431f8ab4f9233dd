package echotest

import (
	"context"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// HealthOfEveryService lists the services at cc by reflection and asks
// the health service of each, and of "" (the server as a whole): it
// returns each one's status by name, or, for a check that fails, the
// name of its code, as grpc_health_probe -service would see it.
func HealthOfEveryService(ctx context.Context, cc grpc.ClientConnInterface) (map[string]string, error) {
	names, err := ListServices(ctx, cc)
	if err != nil {
		return nil, err
	}
	health := make(map[string]string, len(names)+1)
	for _, name := range append(names, "") {
		r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: name})
		if err != nil {
			health[name] = status.Code(err).String()
			continue
		}
		health[name] = r.GetStatus().String()
	}
	return health, nil
}
