package localgrpc

// The code under gen/ is generated from proto/ by buf and the protoc plugins
// pinned as go.mod tools, so `go generate ./...` needs nothing but Go.
//go:generate go tool buf generate
