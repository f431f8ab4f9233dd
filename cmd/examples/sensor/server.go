package sensor

import (
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server is the Sensor service of a set of Sensors.
type Server struct {
	sensorv1.UnimplementedSensorServer
	sensors *Sensors
	cfg     config
}

// NewServer returns a Server of sensors, which batches watched values as
// opts say (Batching with its defaults if none). It panics on options out
// of range.
func NewServer(sensors *Sensors, opts ...Option) *Server {
	return &Server{sensors: sensors, cfg: newConfig(opts)}
}

// Watch serves one stream. Its goroutine receives and carries out the
// requests, as the article's recvLoop does; one more sends, as its
// sendLoop does, both the answers and the watched values, which reach it
// in one queue in the order they happened, so that no answer overtakes a
// value or falls behind one. Receiving stays on the handler's goroutine
// because an in-process channel with Inline execution runs the handler as
// a coroutine that may only wait on its stream. (Even so, an Inline
// handler blocks its caller while it waits for the queue to the sender,
// which is only full when the client has stopped reading.)
//
// The call ends when the client closes its side (after every value and
// answer before it has been sent), when the client goes away, or when a
// Send fails, which ends the call on every transport at once, so that the
// pending Recv returns too. Nothing of the stream outlives Watch.
func (s *Server) Watch(stream grpc.BidiStreamingServer[sensorv1.WatchRequest, sensorv1.WatchResponse]) error {
	w := newWatch(s, stream)
	sent := make(chan error, 1)
	go func() { sent <- w.sendLoop() }()
	recvErr := w.recvLoop()
	w.end()
	return cause(<-sent, recvErr)
}

// cause is the error a call ends with: the failure of one side, rather
// than the end of the stream's context that the failure brings the other.
func cause(errs ...error) error {
	var ended error
	for _, err := range errs {
		switch status.Code(err) {
		case codes.OK:
		case codes.Canceled, codes.DeadlineExceeded:
			if ended == nil {
				ended = err
			}
		default:
			return err
		}
	}
	return ended
}
