package sensor

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/localgrpc/localgrpc/batch"
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// queueLength is how many values and answers a stream holds for its
// sender before the sensors and the receiver wait.
const queueLength = 256

// A watch is the state of one Watch stream.
type watch struct {
	sensors *Sensors
	cfg     config
	stream  grpc.BidiStreamingServer[sensorv1.WatchRequest, sensorv1.WatchResponse]

	// events carries values and answers to the sender, in order. The
	// sensors and the receiver put; end closes it once neither can.
	events chan event
	// stop is closed when the sender has returned: putting gives up.
	stop chan struct{}
	// watching is the sensors watched, by name; the receiver's alone.
	watching map[string]*sensor

	failOnce sync.Once
	failed   chan struct{} // closed when a batch's Send failed
	failure  error
}

// An event is a value of a watched sensor or an answer to a request.
type event struct {
	reading Reading
	answer  *sensorv1.WatchResponse // if not nil, the event is this answer
}

func newWatch(s *Server, stream grpc.BidiStreamingServer[sensorv1.WatchRequest, sensorv1.WatchResponse]) *watch {
	return &watch{
		sensors:  s.sensors,
		cfg:      s.cfg,
		stream:   stream,
		events:   make(chan event, queueLength),
		stop:     make(chan struct{}),
		watching: map[string]*sensor{},
		failed:   make(chan struct{}),
	}
}

// put queues ev for the sender, and reports false if the sender has
// returned.
func (w *watch) put(ev event) bool {
	select {
	case w.events <- ev:
		return true
	case <-w.stop:
		return false
	}
}

// recvLoop carries out requests until the client closes its side (nil),
// Recv fails (its error), or the sender has returned (nil: the sender's
// error is the call's).
func (w *watch) recvLoop() error {
	for {
		req, err := w.stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !w.handle(req) {
			return nil
		}
	}
}

// handle carries out one request and queues its answer.
func (w *watch) handle(req *sensorv1.WatchRequest) bool {
	switch r := req.GetRequest().(type) {
	case *sensorv1.WatchRequest_CreateRequest:
		return w.create(r.CreateRequest.GetSensorId())
	case *sensorv1.WatchRequest_CancelRequest:
		return w.cancel(r.CancelRequest.GetSensorId())
	case *sensorv1.WatchRequest_NowRequest:
		return w.now(r.NowRequest.GetSensorId())
	}
	return w.answer(&sensorv1.WatchResponse{Error: "empty request: set one of create_request, cancel_request and now_request"})
}

func (w *watch) answer(r *sensorv1.WatchResponse) bool { return w.put(event{answer: r}) }

// create starts watching id. A failure is answered as the article does,
// canceleted with an error.
func (w *watch) create(id string) bool {
	sn, ok := w.sensors.sensors[id]
	if !ok {
		return w.answer(&sensorv1.WatchResponse{SensorId: id, Canceleted: true, Error: fmt.Sprintf("no sensor %q", id)})
	}
	if _, ok := w.watching[id]; ok {
		return w.answer(&sensorv1.WatchResponse{SensorId: id, Canceleted: true, Error: fmt.Sprintf("sensor %q is already watched", id)})
	}
	w.watching[id] = sn
	return sn.watch(w, event{answer: &sensorv1.WatchResponse{SensorId: id, Created: true}})
}

// cancel stops watching id: no value of it is queued after the answer.
func (w *watch) cancel(id string) bool {
	sn, ok := w.watching[id]
	if !ok {
		return w.answer(&sensorv1.WatchResponse{SensorId: id, Canceleted: true, Error: fmt.Sprintf("sensor %q is not watched", id)})
	}
	sn.unwatch(w)
	delete(w.watching, id)
	return w.answer(&sensorv1.WatchResponse{SensorId: id, Canceleted: true})
}

// now answers with id's last reading, in the article's one-value shape.
func (w *watch) now(id string) bool {
	sn, ok := w.sensors.sensors[id]
	if !ok {
		return w.answer(&sensorv1.WatchResponse{SensorId: id, Error: fmt.Sprintf("no sensor %q", id)})
	}
	r := sn.read()
	return w.answer(&sensorv1.WatchResponse{SensorId: id, Timestamp: timestamppb.New(r.Time), Value: r.Value})
}

// end stops every watch of the stream and closes the sender's queue.
func (w *watch) end() {
	for id, sn := range w.watching {
		sn.unwatch(w)
		delete(w.watching, id)
	}
	close(w.events)
}

// sendLoop sends what the queue carries until it is closed and drained
// (nil), a Send fails, or the stream's context ends. Values go through a
// batch.Sender; an answer flushes the values before it and is then sent
// directly, which the Sender allows between its Flush and the next Add.
func (w *watch) sendLoop() error {
	defer close(w.stop)
	var opts []batch.Option
	add := addValue
	if w.cfg.batched {
		opts = append(opts, batch.MaxItems(w.cfg.maxItems), batch.MaxAge(w.cfg.maxAge))
	} else {
		opts = append(opts, batch.MaxItems(1))
		add = setValue
	}
	out := batch.NewSender(w.sendBatch, add, opts...)
	// On every way out, so that no timer outlives the stream; after a
	// failure it sends nothing.
	defer out.Close()
	ctx := w.stream.Context()
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				return out.Close()
			}
			if ev.answer == nil {
				if err := out.Add(ev.reading); err != nil {
					return err
				}
				continue
			}
			if err := out.Flush(); err != nil {
				return err
			}
			if err := w.stream.Send(ev.answer); err != nil {
				return err
			}
		case <-w.failed:
			return w.failure
		case <-ctx.Done():
			// A failed Send ends the context before it returns: if a
			// MaxAge timer's did, Close returns its error, the call's
			// cause, once the timer has let go of the Sender.
			if err := out.Close(); err != nil {
				return err
			}
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// sendBatch is the Sender's send: a failure in a MaxAge timer's send, which
// no Add or Flush may follow soon, ends the loop through failed.
func (w *watch) sendBatch(m *sensorv1.WatchResponse) error {
	err := w.stream.Send(m)
	if err != nil {
		w.failOnce.Do(func() {
			w.failure = err
			close(w.failed)
		})
	}
	return err
}

// addValue adds r to a batch of values.
func addValue(m *sensorv1.WatchResponse, r Reading) {
	m.Values = append(m.Values, &sensorv1.SensorValue{SensorId: r.SensorID, Timestamp: timestamppb.New(r.Time), Value: r.Value})
}

// setValue makes m the one-value message of the article.
func setValue(m *sensorv1.WatchResponse, r Reading) {
	m.SensorId, m.Timestamp, m.Value = r.SensorID, timestamppb.New(r.Time), r.Value
}
