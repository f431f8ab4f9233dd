// Package cmd is the module of the localgrpc CLI, its benchmarks and the
// tools that generate code, apart from the library at the repository's
// root so that importers of the library do not inherit their
// dependencies. It holds no code of its own: its packages are below it.
package cmd

// The generated code of the Echo and ListStrings APIs (proto/ at the
// repository's root) is made by buf and the protoc plugins pinned as tools
// of this module, so `go generate ./cmd/...` needs nothing but Go: messages
// and grpc-go code into the library's gen/, connect-go code into this
// module's gen/.
//go:generate go tool buf generate ..

// The test messages of every shape and Go API protoc-gen-go makes
// (internal/zoo, importable by the tests of both modules: inproc's
// handover, shm:'s oracle), beside their .proto files.
//go:generate go tool buf generate ../internal/zoo --template buf.gen.zoo.yaml

// vtprotobuf's CloneVT alone for the zoo's vtclone package, which imports
// nothing beyond google.golang.org/protobuf, so that the library's own
// tests can use it.
//go:generate go tool buf generate ../internal/zoo --template buf.gen.vtclone.yaml --path ../internal/zoo/vtclone

// Messages with vtprotobuf's fast paths, for inproc's tests of them.
//go:generate go tool buf generate internal/vtzoo --template buf.gen.vtzoo.yaml

// The Series workload's Store API shaped messages, by gogoproto's plugin.
//go:generate go tool buf generate internal/bench/storepb --template buf.gen.store.yaml --path internal/bench/storepb/store.proto
