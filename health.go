package localgrpc

import (
	"errors"

	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
)

// SetServingStatus sets what health checks report for service, on every
// transport: a registered service's name, any other name a client may
// check, or "" for the server as a whole. Watchers of the service hear of
// the change. Once the server stops or begins to drain every service
// reports NOT_SERVING, and SetServingStatus changes nothing, as with
// grpc-go's health.Server after Shutdown.
//
// It is an error if the server has no health service: see [WithHealth].
func (s *Server) SetServingStatus(service string, status healthgrpc.HealthCheckResponse_ServingStatus) error {
	if s.health == nil {
		return errors.New("localgrpc: SetServingStatus: the server has no health service; create it with WithHealth")
	}
	s.health.SetServingStatus(service, status)
	return nil
}
