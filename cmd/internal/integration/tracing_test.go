package integration_test

import (
	"github.com/localgrpc/localgrpc/internal/servertest"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestTracingEveryTransport instruments a server and a client with
// OpenTelemetry's gRPC stats handlers, given once each as localgrpc
// options, and checks that every kind of call on every transport makes a
// client span and a server span that is its child: the trace context
// crosses in-process calls as it crosses a socket.
func TestTracingEveryTransport(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	otelOpts := []otelgrpc.Option{otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagation.TraceContext{})}

	srv := servertest.NewEchoServer(localgrpc.WithServerStatsHandler(otelgrpc.NewServerHandler(otelOpts...)))
	name := servertest.UniqueName()
	servertest.Serve(t, srv, "inproc:"+name, "unix:@"+name, "unix:"+servertest.SocketPath(t), "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		c := servertest.Dial(t, addr, localgrpc.WithClientStatsHandler(otelgrpc.NewClientHandler(otelOpts...)))
		for _, call := range servertest.EchoCalls {
			t.Run(servertest.TransportName(addr)+"/"+call.Name, func(t *testing.T) {
				exporter.Reset()
				if _, err := call.Call(servertest.TimeoutCtx(t), c); err != nil {
					t.Fatal(err)
				}
				// Over a socket the server's span may end after the client
				// has its status: wait, within a bound, for both.
				client, server, spans := clientAndServer(exporter)
				for deadline := time.Now().Add(servertest.WaitLimit); (client == nil || server == nil) && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
					client, server, spans = clientAndServer(exporter)
				}
				if client == nil || server == nil {
					t.Fatalf("spans %v: want a client span and a server span that is its child", spanNames(spans))
				}
				if server.SpanContext.TraceID() != client.SpanContext.TraceID() {
					t.Errorf("the server span is in trace %v, want the client's, %v", server.SpanContext.TraceID(), client.SpanContext.TraceID())
				}
			})
		}
	}
}

// clientAndServer returns the client span exported so far and the server
// span that is its child, if it was exported too. (A server span of an
// earlier call may end late; it is not the client's child.)
func clientAndServer(exporter *tracetest.InMemoryExporter) (client, server *tracetest.SpanStub, spans tracetest.SpanStubs) {
	spans = exporter.GetSpans()
	for i := range spans {
		if spans[i].SpanKind == trace.SpanKindClient {
			client = &spans[i]
		}
	}
	for i := range spans {
		if client != nil && spans[i].SpanKind == trace.SpanKindServer && spans[i].Parent.SpanID() == client.SpanContext.SpanID() {
			server = &spans[i]
		}
	}
	return client, server, spans
}

func spanNames(spans tracetest.SpanStubs) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.SpanKind.String()+":"+s.Name)
	}
	return names
}
