// Package integration tests the library with what only this module has:
// connect-go clients against HTTPClient, OpenTelemetry's gRPC
// instrumentation across every transport, and the messages of every
// generator (vtprotobuf's and gogoproto's are this module's) over shm:
// against grpc-go. Its tests are its content.
package integration
