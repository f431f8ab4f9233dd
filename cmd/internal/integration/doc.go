// Package integration tests the library with what only this module has:
// connect-go clients against HTTPClient, and OpenTelemetry's gRPC
// instrumentation across every transport. Its tests are its content.
package integration
