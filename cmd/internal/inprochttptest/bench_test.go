package inprochttptest

import (
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// The benchmarks compare the CLI's Echo service on connect-go called
// in-process with the same over a unix socket with HTTP/2, in one run:
//
//	go test -run '^$' -bench . -count 6 ./internal/inprochttptest > bench.txt
//	go run golang.org/x/perf/cmd/benchstat -col /transport bench.txt

// benchProtocols are the protocols the benchmarks call in: gRPC, which
// grpc-go clients speak too, and Connect, connect-go's default.
var benchProtocols = protocols[:2]

// forEachClient runs f as a sub-benchmark for each protocol and transport,
// with a client of Echo. Compression is off, as in the CLI's
// measurements: connect-go would gzip every message otherwise, and the
// benchmarks would measure gzip.
func forEachClient(b *testing.B, f func(b *testing.B, c echov1connect.EchoClient)) {
	for _, p := range benchProtocols {
		for _, tr := range transports {
			b.Run("protocol="+p.name+"/transport="+tr.name, func(b *testing.B) {
				hc, base := tr.client(b, echoconnect.Server{})
				opts := append([]connect.ClientOption{connect.WithAcceptCompression("gzip", nil, nil)}, p.opts...)
				f(b, echov1connect.NewEchoClient(hc, base, opts...))
			})
		}
	}
}

// BenchmarkUnary is one Echo Get of a small text.
func BenchmarkUnary(b *testing.B) {
	forEachClient(b, func(b *testing.B, c echov1connect.EchoClient) {
		req := connect.NewRequest(&echov1.EchoRequest{Text: "hello world"})
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Get(b.Context(), req)
			if err != nil || resp.Msg.GetText() != "hello world" {
				b.Fatalf("Get: %v, %v", resp, err)
			}
		}
	})
}

// BenchmarkServerStream is one Echo Expand of 1,000 words: a stream of
// 1,000 small messages, received one by one.
func BenchmarkServerStream(b *testing.B) {
	const messages = 1000
	words := make([]string, messages)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	b.Run(fmt.Sprintf("messages=%d", messages), func(b *testing.B) {
		forEachClient(b, func(b *testing.B, c echov1connect.EchoClient) {
			req := connect.NewRequest(&echov1.EchoRequest{Text: strings.Join(words, " ")})
			b.ReportAllocs()
			for b.Loop() {
				s, err := c.Expand(b.Context(), req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for s.Receive() {
					n++
				}
				if err := s.Err(); err != nil || n != messages {
					b.Fatalf("Expand: %d messages, %v", n, err)
				}
				s.Close()
			}
		})
	})
}
