package sensor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/sensor"
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// waitLimit bounds every wait of these tests, with room for a busy
// machine and the race detector.
const waitLimit = 30 * time.Second

// transportNames are the transports of a rig: every address kind of one
// Server, and an in-process channel with the other copy mode and Inline
// execution, where the handler is a coroutine.
var transportNames = []string{"inproc", "unix", "abstract", "tcp", "inproc-share-inline"}

// A rig is simulated sensors, served until the test ends by one
// localgrpc.Server on every kind of address (and by a second, in-process,
// with Share and Inline), with a clock the test moves.
type rig struct {
	sensors *sensor.Sensors
	addrs   map[string]string // by transport name
	ended   chan error        // what each Watch handler returned
	now     time.Time
}

var start = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// newRig serves ids (the article's sensors if none) with opts, and extra
// server options.
func newRig(t *testing.T, ids []string, opts []sensor.Option, serverOpts ...localgrpc.ServerOption) *rig {
	t.Helper()
	r := &rig{sensors: sensor.NewSensors(start, ids...), addrs: map[string]string{}, ended: make(chan error, 100), now: start}
	report := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		err := handler(srv, ss)
		r.ended <- err
		return err
	}
	dir, err := os.MkdirTemp("", "sensor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	name := fmt.Sprintf("sensor-test-%d-%08x", os.Getpid(), rand.Uint32())
	for _, s := range []struct {
		addrs []string
		opts  []localgrpc.ServerOption
	}{
		{[]string{"inproc:" + name, "unix:" + filepath.Join(dir, "s.sock"), "unix-abstract:" + name, "127.0.0.1:0"}, nil},
		{[]string{"inproc:" + name + "-inline"}, []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Inline))}},
	} {
		srv := localgrpc.NewServer(append(append(s.opts, localgrpc.WithServerStreamInterceptor(report)), serverOpts...)...)
		sensorv1.RegisterSensorServer(srv, sensor.NewServer(r.sensors, opts...))
		servertest.Serve(t, srv, s.addrs...)
		for _, addr := range srv.Addrs() {
			a, err := localgrpc.ParseAddress(addr)
			if err != nil {
				t.Fatal(err)
			}
			kind := a.Kind.String()
			if len(s.opts) > 0 {
				kind = "inproc-share-inline"
			}
			r.addrs[kind] = addr
		}
	}
	return r
}

// tick moves the clock a second on and has every sensor read.
func (r *rig) tick() map[string]sensor.Reading {
	r.now = r.now.Add(time.Second)
	byID := map[string]sensor.Reading{}
	for _, rd := range r.sensors.Tick(r.now) {
		byID[rd.SensorID] = rd
	}
	return byID
}

// mark has sensor id read value, a value no tick makes, a moment later.
func (r *rig) mark(t *testing.T, id string, value int32) sensor.Reading {
	t.Helper()
	r.now = r.now.Add(time.Millisecond)
	if err := r.sensors.Record(id, value, r.now); err != nil {
		t.Fatal(err)
	}
	return sensor.Reading{SensorID: id, Time: r.now, Value: value}
}

// handlerEnd waits for a Watch handler to return, and returns its error.
func (r *rig) handlerEnd(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.ended:
		return err
	case <-time.After(waitLimit):
		t.Fatal("the Watch handler did not return")
		return nil
	}
}

// A client is a Watch stream seen as a sequence of items: the answers and
// the values, out of the batches that carry them.
type client struct {
	t       *testing.T
	stream  grpc.BidiStreamingClient[sensorv1.WatchRequest, sensorv1.WatchResponse]
	cancel  context.CancelFunc
	pending []item
	// messages and values count what was received.
	messages, values int
	sizes            []int // values per message that carried values
}

// An item is an answer or one value.
type item struct {
	answer *sensorv1.WatchResponse
	value  *sensorv1.SensorValue
}

func (it item) String() string {
	if it.answer != nil {
		return "answer " + it.answer.String()
	}
	return "value " + it.value.String()
}

// watch opens a Watch stream on transport, ending with the test or after
// waitLimit.
func (r *rig) watch(t *testing.T, transport string) *client {
	t.Helper()
	cc, err := localgrpc.NewClient(r.addrs[transport])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	stream, err := sensorv1.NewSensorClient(cc).Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, stream: stream, cancel: cancel}
}

func (c *client) send(req *sensorv1.WatchRequest) {
	c.t.Helper()
	if err := c.stream.Send(req); err != nil {
		c.t.Fatalf("Send(%v): %v", req, err)
	}
}

func (c *client) create(id string) {
	c.t.Helper()
	c.send(&sensorv1.WatchRequest{Request: &sensorv1.WatchRequest_CreateRequest{CreateRequest: &sensorv1.WatchCreateRequest{SensorId: id}}})
}

func (c *client) cancelWatch(id string) {
	c.t.Helper()
	c.send(&sensorv1.WatchRequest{Request: &sensorv1.WatchRequest_CancelRequest{CancelRequest: &sensorv1.WatchCancelRequest{SensorId: id}}})
}

func (c *client) now(id string) {
	c.t.Helper()
	c.send(&sensorv1.WatchRequest{Request: &sensorv1.WatchRequest_NowRequest{NowRequest: &sensorv1.WatchNowRequest{SensorId: id}}})
}

// next returns the next item, reading a message if none is left.
func (c *client) next() item {
	c.t.Helper()
	for len(c.pending) == 0 {
		m, err := c.stream.Recv()
		if err != nil {
			c.t.Fatalf("Recv: %v", err)
		}
		c.messages++
		if len(m.GetValues()) == 0 {
			c.pending = append(c.pending, item{answer: m})
			continue
		}
		c.values += len(m.Values)
		c.sizes = append(c.sizes, len(m.Values))
		for _, v := range m.Values {
			c.pending = append(c.pending, item{value: v})
		}
	}
	it := c.pending[0]
	c.pending = c.pending[1:]
	return it
}

// expectAnswer checks that the next item is the answer want.
func (c *client) expectAnswer(want *sensorv1.WatchResponse) {
	c.t.Helper()
	if it := c.next(); it.answer == nil || !proto.Equal(it.answer, want) {
		c.t.Fatalf("got %v, want answer %v", it, want)
	}
}

// expectError checks that the next item is an error answer about id,
// canceleted or not.
func (c *client) expectError(id string, canceleted bool) {
	c.t.Helper()
	it := c.next()
	if a := it.answer; a == nil || a.GetSensorId() != id || a.GetCanceleted() != canceleted || a.GetError() == "" || a.GetCreated() || a.GetTimestamp() != nil {
		c.t.Fatalf("got %v, want an error about %q with canceleted %v", it, id, canceleted)
	}
}

// expectValues checks that the next items are the values of want, in
// order: nothing else came between them.
func (c *client) expectValues(want ...sensor.Reading) {
	c.t.Helper()
	for i, w := range want {
		it := c.next()
		if it.value == nil || !proto.Equal(it.value, value(w)) {
			c.t.Fatalf("item %d: got %v, want value %v", i, it, value(w))
		}
	}
}

// expectEnd checks that the stream ends with an OK status, with nothing
// left.
func (c *client) expectEnd() {
	c.t.Helper()
	if len(c.pending) > 0 {
		c.t.Fatalf("left unread: %v", c.pending)
	}
	if m, err := c.stream.Recv(); !errors.Is(err, io.EOF) {
		c.t.Fatalf("at the end: %v, %v; want io.EOF", m, err)
	}
}

func value(r sensor.Reading) *sensorv1.SensorValue {
	return &sensorv1.SensorValue{SensorId: r.SensorID, Timestamp: timestamppb.New(r.Time), Value: r.Value}
}
