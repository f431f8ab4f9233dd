package sensor

import sensorv1 "github.com/localgrpc/localgrpc/gen/sensor/v1"

// Values returns the sensor values a response carries, for a client that
// reads batched and unbatched servers alike: its values, or the one value
// of the article's shape in sensor_id, timestamp and value (a watched
// value of an unbatched server, or the answer to a now request). An answer
// to a create or cancel request, and an error, carry none.
func Values(r *sensorv1.WatchResponse) []*sensorv1.SensorValue {
	if len(r.GetValues()) > 0 {
		return r.GetValues()
	}
	if r.GetTimestamp() != nil {
		return []*sensorv1.SensorValue{{SensorId: r.GetSensorId(), Timestamp: r.GetTimestamp(), Value: r.GetValue()}}
	}
	return nil
}
