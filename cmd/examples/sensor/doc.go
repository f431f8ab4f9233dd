// Package sensor is the sensor watcher of the dev.to article "gRPC
// Streaming the Right Way", served over localgrpc: one bidirectional
// Sensor.Watch stream on which a client starts and stops watching
// simulated sensors and asks for their current values, with the article's
// closing challenge taken up: a watched sensor's values go out through a
// batch.Sender, several to a message, none waiting longer than its MaxAge.
//
// [Sensors] are simulated and driven from outside: [Sensors.Tick] has
// every sensor read a value at a given time, [Sensors.Record] has one read
// a given value, and [Sensors.Run] ticks on the real clock. Tests tick
// them by hand, so what a watcher receives is known exactly, and "no more
// values of a cancelled sensor" is checked against a marker value sent
// through a sensor still watched, not by waiting seconds.
//
// A [Server] answers every request on the stream (a created, cancelled or
// error response, or a current value) in order with the watched values:
// values read before an answer's request took effect are sent before the
// answer, and a cancelled sensor's values never follow its answer. A
// request the server cannot carry out gets an error response and the
// stream stays open.
//
// Run it, from the repository's root: go test -v ./cmd/examples/sensor.
package sensor
