package sensor_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/sensor"
	sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"
)

// A client watches temp, reads light once and stops watching temp, on one
// stream; the example ticks the sensors itself.
func Example() {
	sensors := sensor.NewSensors(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := localgrpc.NewServer()
	sensorv1.RegisterSensorServer(srv, sensor.NewServer(sensors))
	if err := srv.Listen("inproc:sensor-example"); err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		stop()
		<-served
	}()
	cc, err := localgrpc.NewClient("inproc:sensor-example")
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	stream, err := sensorv1.NewSensorClient(cc).Watch(ctx)
	if err != nil {
		log.Fatal(err)
	}
	recv := func() {
		r, err := stream.Recv()
		if err != nil {
			log.Fatal(err)
		}
		switch values := sensor.Values(r); {
		case len(values) > 0:
			for _, v := range values {
				fmt.Println(v.GetSensorId(), v.GetValue(), "at", v.GetTimestamp().AsTime().Format(time.TimeOnly))
			}
		case r.GetCreated():
			fmt.Println(r.GetSensorId(), "created")
		case r.GetCanceleted():
			fmt.Println(r.GetSensorId(), "cancelled")
		}
	}

	stream.Send(&sensorv1.WatchRequest{Request: &sensorv1.WatchRequest_CreateRequest{CreateRequest: &sensorv1.WatchCreateRequest{SensorId: "temp"}}})
	recv()
	sensors.Tick(time.Date(2025, 1, 1, 0, 0, 1, 0, time.UTC))
	recv() // within MaxAge
	stream.Send(&sensorv1.WatchRequest{Request: &sensorv1.WatchRequest_NowRequest{NowRequest: &sensorv1.WatchNowRequest{SensorId: "light"}}})
	recv()
	stream.Send(&sensorv1.WatchRequest{Request: &sensorv1.WatchRequest_CancelRequest{CancelRequest: &sensorv1.WatchCancelRequest{SensorId: "temp"}}})
	recv()
	stream.CloseSend()
	if _, err := stream.Recv(); err != nil {
		fmt.Println("end:", err)
	}
	// Output:
	// temp created
	// temp 21 at 00:00:01
	// light 301 at 00:00:01
	// temp cancelled
	// end: EOF
}
