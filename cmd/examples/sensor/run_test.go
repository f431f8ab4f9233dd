package sensor_test

import (
	"context"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/examples/sensor"
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
)

// TestRun ticks the sensors on the real clock: a watcher gets values
// without the test ticking, and Run returns when its context ends.
func TestRun(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		r.sensors.Run(ctx, time.Millisecond)
	}()
	c := r.watch(t, "inproc")
	c.create("hum")
	c.expectAnswer(&sensorv1.WatchResponse{SensorId: "hum", Created: true})
	for range 3 {
		if it := c.next(); it.value.GetSensorId() != "hum" || !it.value.GetTimestamp().AsTime().After(start) {
			t.Fatalf("got %v, want a value of hum read after the start", it)
		}
	}
	stop()
	select {
	case <-ran:
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestNewSensors(t *testing.T) {
	s := sensor.NewSensors(start)
	if got := s.IDs(); len(got) != 4 || got[0] != "temp" || got[3] != "light" {
		t.Errorf("IDs %v, want the article's four", got)
	}
	// Values climb by one from the base and start again after ten.
	var temps []int32
	for i := range 12 {
		for _, rd := range s.Tick(start.Add(time.Duration(i+1) * time.Second)) {
			if rd.SensorID == "temp" {
				temps = append(temps, rd.Value)
			}
		}
	}
	want := []int32{21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 21, 22}
	for i := range want {
		if temps[i] != want[i] {
			t.Fatalf("temp read %v, want %v", temps, want)
		}
	}
	if err := s.Record("nope", 1, start); err == nil {
		t.Error("Record of no sensor: no error")
	}
	defer func() {
		if recover() == nil {
			t.Error("NewSensors with a name twice: no panic")
		}
	}()
	sensor.NewSensors(start, "a", "a")
}
