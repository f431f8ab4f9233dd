package gateway

// The google.api.http option's definitions, printed from the descriptors
// of the genproto module go.mod pins, since buf has no googleapis of its
// own and the Buf Schema Registry is a network service go.sum does not pin.
//go:generate go run ./internal/apiproto proto

// The API's messages, grpc-go code and grpc-gateway reverse proxy, by buf
// and the plugins pinned as tools of the cmd module.
//go:generate go -C ../.. tool buf generate examples/gateway/proto --template examples/gateway/buf.gen.yaml --path examples/gateway/proto/greeter
