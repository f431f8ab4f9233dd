package sensor_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/sensor"
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestWatch is the article's happy path, on every transport, with the
// sensors ticked by the test so that every item is known: create temp and
// get its values, create pres and get both, have an invalid sensor
// refused, read light once and get none of its values after, cancel temp
// and get none of its values after. The article waits two seconds to see
// nothing come; here a marker value read by pres, still watched, comes
// after a tick, so anything of light or temp from that tick would have
// come before it.
func TestWatch(t *testing.T) {
	for _, transport := range transportNames {
		t.Run("transport="+transport, func(t *testing.T) {
			r := newRig(t, nil, nil)
			c := r.watch(t, transport)

			c.create("temp")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "temp", Created: true})
			v := r.tick()
			c.expectValues(v["temp"])

			c.create("pres")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "pres", Created: true})
			v = r.tick()
			c.expectValues(v["temp"], v["pres"])
			v = r.tick()
			c.expectValues(v["temp"], v["pres"])

			c.create("invalid")
			c.expectError("invalid", true)

			c.now("light")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "light", Timestamp: timestamppb.New(v["light"].Time), Value: v["light"].Value})
			v = r.tick()
			c.expectValues(v["temp"], v["pres"], r.mark(t, "pres", -1))

			c.cancelWatch("temp")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "temp", Canceleted: true})
			v = r.tick()
			c.expectValues(v["pres"], r.mark(t, "pres", -2))

			if err := c.stream.CloseSend(); err != nil {
				t.Fatal(err)
			}
			c.expectEnd()
			if err := r.handlerEnd(t); err != nil {
				t.Errorf("the handler returned %v", err)
			}
			for _, id := range r.sensors.IDs() {
				if n := r.sensors.Watchers(id); n != 0 {
					t.Errorf("%s has %d watchers after the stream", id, n)
				}
			}
		})
	}
}

// TestBadRequests sends every request the server cannot carry out: each
// gets the error response the proto defines, and the stream carries on.
func TestBadRequests(t *testing.T) {
	for _, transport := range transportNames {
		t.Run("transport="+transport, func(t *testing.T) {
			r := newRig(t, nil, nil)
			c := r.watch(t, transport)

			c.create("nope") // no such sensor
			c.expectError("nope", true)
			c.create("") // no sensor named
			c.expectError("", true)
			c.cancelWatch("temp") // not watched
			c.expectError("temp", true)
			c.now("nope")
			c.expectError("nope", false)
			c.send(&sensorv1.WatchRequest{}) // the oneof empty
			c.expectError("", false)
			c.create("temp")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "temp", Created: true})
			c.create("temp") // twice
			c.expectError("temp", true)

			// Still open, and still watching temp, once.
			v := r.tick()
			c.expectValues(v["temp"])
			c.cancelWatch("temp")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "temp", Canceleted: true})
			c.cancelWatch("temp") // again
			c.expectError("temp", true)
			if err := c.stream.CloseSend(); err != nil {
				t.Fatal(err)
			}
			c.expectEnd()
			if err := r.handlerEnd(t); err != nil {
				t.Errorf("the handler returned %v", err)
			}
		})
	}
}

// TestClientCancel cancels a stream that watches every sensor, with values
// sent and unread: the handler returns, no sensor keeps a watcher, and
// ticking more than a stream's queue holds does not block.
func TestClientCancel(t *testing.T) {
	for _, transport := range transportNames {
		t.Run("transport="+transport, func(t *testing.T) {
			r := newRig(t, nil, nil)
			c := r.watch(t, transport)
			for _, id := range r.sensors.IDs() {
				c.create(id)
				c.expectAnswer(&sensorv1.WatchResponse{SensorId: id, Created: true})
			}
			v := r.tick()
			c.expectValues(v["temp"]) // mid-watch: values flowing
			for range 5 {
				r.tick()
			}
			c.cancel()
			for {
				if _, err := c.stream.Recv(); err != nil {
					if status.Code(err) != codes.Canceled {
						t.Errorf("after cancel: %v, want Canceled", err)
					}
					break
				}
			}
			if err := r.handlerEnd(t); status.Code(err) != codes.Canceled {
				t.Errorf("the handler returned %v, want Canceled", err)
			}
			for _, id := range r.sensors.IDs() {
				if n := r.sensors.Watchers(id); n != 0 {
					t.Errorf("%s has %d watchers after the stream", id, n)
				}
			}
			for range 1000 {
				r.tick()
			}
		})
	}
}

// TestBatching is the article's challenge: sensors ticking together share
// messages.
func TestBatching(t *testing.T) {
	ids := []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	t.Run("by=max-items", func(t *testing.T) {
		// MaxAge too long to matter: every tick fills one message of 8.
		r := newRig(t, ids, []sensor.Option{sensor.Batching(len(ids), time.Hour)})
		c := r.watch(t, "unix")
		for _, id := range ids {
			c.create(id)
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: id, Created: true})
		}
		for range 10 {
			v := r.tick()
			for _, id := range ids {
				c.expectValues(v[id])
			}
		}
		if c.values != 80 || len(c.sizes) != 10 {
			t.Errorf("%d values in %d messages, want 80 in 10", c.values, len(c.sizes))
		}
	})
	t.Run("by=default", func(t *testing.T) {
		for _, transport := range transportNames {
			t.Run("transport="+transport, func(t *testing.T) {
				r := newRig(t, ids, nil)
				c := r.watch(t, transport)
				for _, id := range ids {
					c.create(id)
					c.expectAnswer(&sensorv1.WatchResponse{SensorId: id, Created: true})
				}
				for range 20 {
					v := r.tick()
					for _, id := range ids {
						c.expectValues(v[id])
					}
				}
				// The 8 values of a tick reach the sender within
				// microseconds of each other, far inside MaxAge.
				if len(c.sizes) >= c.values {
					t.Errorf("%d values in %d messages, want fewer messages", c.values, len(c.sizes))
				}
			})
		}
	})
	t.Run("by=max-age", func(t *testing.T) {
		// One value, and nothing after it: MaxAge sends it alone.
		const maxAge = 20 * time.Millisecond
		for _, transport := range transportNames {
			t.Run("transport="+transport, func(t *testing.T) {
				r := newRig(t, ids, []sensor.Option{sensor.Batching(64, maxAge)})
				c := r.watch(t, transport)
				c.create("s3")
				c.expectAnswer(&sensorv1.WatchResponse{SensorId: "s3", Created: true})
				begin := time.Now()
				c.expectValues(r.mark(t, "s3", 7))
				if waited := time.Since(begin); waited < maxAge {
					t.Errorf("the value came after %v, before MaxAge %v", waited, maxAge)
				}
				if len(c.sizes) != 1 || c.sizes[0] != 1 {
					t.Errorf("messages of %v values, want one of 1", c.sizes)
				}
			})
		}
	})
	t.Run("by=none", func(t *testing.T) {
		// The article's shape: a message per value, in the response's own
		// fields.
		r := newRig(t, ids, []sensor.Option{sensor.OnePerMessage()})
		c := r.watch(t, "tcp")
		for _, id := range ids {
			c.create(id)
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: id, Created: true})
		}
		v := r.tick()
		for _, id := range ids {
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: id, Timestamp: timestamppb.New(v[id].Time), Value: v[id].Value})
		}
	})
}

// TestSendFailure has every value message fail to send (over the
// server's size limit, while answers fit). gRPC ends a call at a failed
// Send, on every transport: the client gets the Send's error without
// doing anything more, and the handler, waiting in Recv, returns it.
func TestSendFailure(t *testing.T) {
	limit := localgrpc.WithServerMaxSendMsgSize(12) // a created answer is 8 bytes, a value 18
	for _, transport := range transportNames {
		t.Run("transport="+transport, func(t *testing.T) {
			r := newRig(t, nil, nil, limit)
			c := r.watch(t, transport)
			c.create("temp")
			c.expectAnswer(&sensorv1.WatchResponse{SensorId: "temp", Created: true})
			r.tick()
			if m, err := c.stream.Recv(); status.Code(err) != codes.ResourceExhausted {
				t.Errorf("Recv: %v, %v; want ResourceExhausted", m, err)
			}
			if err := r.handlerEnd(t); status.Code(err) != codes.ResourceExhausted {
				t.Errorf("the handler returned %v, want ResourceExhausted", err)
			}
			if err := c.stream.Send(&sensorv1.WatchRequest{}); !errors.Is(err, io.EOF) {
				t.Errorf("Send after the call's end: %v, want io.EOF", err)
			}
		})
	}
}
