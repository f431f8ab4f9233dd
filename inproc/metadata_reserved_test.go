package inproc_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// reservedPairs are metadata keys gRPC's HTTP/2 transport owns, which
// grpc-go never carries from a sender's metadata to the other side, with
// "host", which the server drops for the :authority, and a key of the
// user's own.
var reservedPairs = []string{
	"te", "trailers", "grpc-status", "5", "grpc-message", "m", "grpc-encoding", "gzip",
	"grpc-timeout", "1S", "grpc-message-type", "t", "content-type", "text/plain",
	"user-agent", "mine", ":path", "/x", ":authority", "elsewhere", "host", "h",
	"users-own", "v",
}

// mdSeen is what a handler and its client saw of a call's metadata.
type mdSeen struct {
	err                error
	incoming           metadata.MD
	header, trailer    metadata.MD
	streamHeader       metadata.MD
	streamTrailer      metadata.MD
	trailersOnlyHeader metadata.MD
	trailersOnlyTrail  metadata.MD
	connectionErr      error
}

// seeMetadata makes the calls of TestReservedMetadataAsGRPC on c and
// returns what was seen; incoming is filled in by srv, which the caller
// registered.
func seeMetadata(t *testing.T, c echov1.EchoClient, incoming *metadata.MD) mdSeen {
	t.Helper()
	var r mdSeen
	ctx := metadata.AppendToOutgoingContext(timeoutCtx(t), reservedPairs...)
	_, r.err = c.Get(ctx, &echov1.EchoRequest{Text: "set"}, grpc.Header(&r.header), grpc.Trailer(&r.trailer))
	r.incoming = *incoming

	s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{Text: "set"}, grpc.CallContentSubtype("proto"))
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	if r.streamHeader, err = s.Header(); err != nil {
		t.Fatalf("Header: %v", err)
	}
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	r.streamTrailer = s.Trailer()

	_, err = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "fail"}, grpc.Header(&r.trailersOnlyHeader), grpc.Trailer(&r.trailersOnlyTrail))
	if status.Code(err) != codes.NotFound {
		t.Fatalf("failing Get: %v, want NotFound", err)
	}
	_, r.connectionErr = c.Get(metadata.AppendToOutgoingContext(timeoutCtx(t), "connection", "close"), &echov1.EchoRequest{Text: "set"})
	return r
}

// reservedMetadataServer sets reserved keys in every header and trailer
// it sends, and records the incoming metadata of the last unary call; a
// request of "fail" sets only a trailer and fails, so that the status
// goes out with no header before it (trailers only).
func reservedMetadataServer(incoming *metadata.MD) *funcEcho {
	set := func(ctx context.Context) {
		_ = grpc.SetHeader(ctx, metadata.Pairs(reservedPairs...))
		_ = grpc.SetTrailer(ctx, metadata.Pairs(reservedPairs...))
	}
	return &funcEcho{
		get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if req.GetText() == "fail" {
				_ = grpc.SetTrailer(ctx, metadata.Pairs("users-own", "v"))
				return nil, status.Error(codes.NotFound, "no")
			}
			*incoming, _ = metadata.FromIncomingContext(ctx)
			set(ctx)
			return &echov1.EchoResponse{Text: "ok"}, nil
		},
		expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			set(s.Context())
			return s.Send(&echov1.EchoResponse{Text: "ok"})
		},
	}
}

// TestReservedMetadataAsGRPC checks, side by side with grpc-go over
// bufconn, that the keys gRPC's transport owns do not cross from a
// sender's metadata, in either direction; that a handler finds the keys
// the transport adds (:authority, content-type, user-agent) and a client
// the content-type, in its header or, after trailers only, its trailer;
// and that a "connection" key fails the call with Internal.
func TestReservedMetadataAsGRPC(t *testing.T) {
	var oracleIn metadata.MD
	cc := realGRPC(t, func(r grpc.ServiceRegistrar) {
		echov1.RegisterEchoServer(r, reservedMetadataServer(&oracleIn))
	}, nil, nil)
	want := seeMetadata(t, echov1.NewEchoClient(cc), &oracleIn)
	if want.err != nil {
		t.Fatalf("grpc-go: %v", want.err)
	}

	forEachMode(t, func(t *testing.T, m testMode) {
		var in metadata.MD
		c, _ := newEcho(t, m, reservedMetadataServer(&in))
		got := seeMetadata(t, c, &in)
		if got.err != nil {
			t.Fatalf("Get: %v", got.err)
		}
		// grpc-go's client adds the compressors it has to
		// grpc-accept-encoding; nothing is compressed in-process.
		if g, w := keys(got.incoming, "grpc-accept-encoding"), keys(want.incoming, "grpc-accept-encoding"); !slices.Equal(g, w) {
			t.Errorf("the handler's incoming keys are %q, over a socket %q", g, w)
		}
		for _, k := range []string{"content-type", "user-agent", "users-own"} {
			if g, w := got.incoming.Get(k), want.incoming.Get(k); !slices.Equal(g, w) {
				t.Errorf("the handler's incoming %s is %q, over a socket %q", k, g, w)
			}
		}
		if a := got.incoming.Get(":authority"); len(a) != 1 || a[0] == "" || a[0] == "elsewhere" {
			t.Errorf("the handler's :authority is %q, want the transport's one", a)
		}
		for _, c := range []struct {
			what      string
			got, want metadata.MD
		}{
			{"unary header", got.header, want.header},
			{"unary trailer", got.trailer, want.trailer},
			{"stream header (content-subtype proto)", got.streamHeader, want.streamHeader},
			{"stream trailer", got.streamTrailer, want.streamTrailer},
			{"header of a trailers-only response", got.trailersOnlyHeader, want.trailersOnlyHeader},
			{"trailer of a trailers-only response", got.trailersOnlyTrail, want.trailersOnlyTrail},
		} {
			if !maps.EqualFunc(c.got, c.want, slices.Equal) {
				t.Errorf("the client's %s is %v, over a socket %v", c.what, c.got, c.want)
			}
		}
		if status.Code(want.connectionErr) != codes.Internal {
			t.Fatalf("grpc-go's call with a connection key: %v, want Internal", want.connectionErr)
		}
		wantCode(t, "a call with a connection key", got.connectionErr, codes.Internal)
	})
}

// keys are md's keys but those left out, sorted.
func keys(md metadata.MD, leftOut ...string) []string {
	var ks []string
	for k := range md {
		if !slices.Contains(leftOut, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// TestRefusedRequestMetadataAsGRPC: request metadata that grpc-go's client
// sends and its server's transport refuses (http2_server.go
// operateHeaders), before its server sees the call: a "connection" key,
// which makes the request malformed in HTTP/2, so the server resets the
// stream (PROTOCOL_ERROR); more than one "host" value, which it answers
// with Internal alone, trailers only (gRFC A41), and checks first. The
// client's NewStream and Send succeed, the call fails with Internal
// where the client waits for the answer, with no header, and with a
// trailer only after trailers only; the server's stats handler hears
// nothing. Metadata grpc-go's client refuses itself (see
// TestInvalidOutgoingMetadata) fails NewStream instead. grpc-go's
// client reports its request's OutPayload before the answer unless the
// answer came before it wrote or reported the request, which only a
// client goroutine stalled between the two lets happen: grpc-go then
// runs again.
func TestRefusedRequestMetadataAsGRPC(t *testing.T) {
	for _, c := range []struct {
		name  string
		pairs []string
	}{
		{"connection", []string{"connection", "close"}},
		{"two-hosts", []string{"host", "a", "host", "b"}},
		{"two-hosts-and-connection", []string{"connection", "close", "host", "a", "host", "b"}},
	} {
		for _, desc := range []struct {
			name string
			desc *grpc.StreamDesc // nil: unary
		}{
			{"unary", nil},
			{"server-stream", &grpc.StreamDesc{ServerStreams: true}},
			{"bidi", &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}},
		} {
			t.Run(c.name+"/"+desc.name, func(t *testing.T) {
				run := func(t *testing.T, cc grpc.ClientConnInterface, cs, ss *kindsRecorder) (string, []string) {
					ctx := metadata.AppendToOutgoingContext(timeoutCtx(t), c.pairs...)
					var out string
					if desc.desc == nil {
						var h, tr metadata.MD
						err := cc.Invoke(ctx, "/echo.v1.Echo/Get", &echov1.EchoRequest{}, &echov1.EchoResponse{}, grpc.Header(&h), grpc.Trailer(&tr))
						out = fmt.Sprintf("%v, header %v (nil=%v), trailer %v", status.Code(err), keys(h), h == nil, keys(tr))
					} else {
						method := "/echo.v1.Echo/Expand"
						if desc.desc.ClientStreams {
							method = "/echo.v1.Echo/Update"
						}
						s, err := cc.NewStream(ctx, desc.desc, method)
						if err != nil {
							return fmt.Sprintf("NewStream: %v", status.Code(err)), nil
						}
						sendErr := s.SendMsg(&echov1.EchoRequest{})
						closeErr := s.CloseSend()
						h, herr := s.Header()
						recvErr := s.RecvMsg(&echov1.EchoResponse{})
						out = fmt.Sprintf("send %v, close-send %v, header %v (nil=%v) %v, recv %v, trailer %v",
							sendErr, closeErr, keys(h), h == nil, herr, status.Code(recvErr), keys(s.Trailer()))
					}
					client := cs.drain()
					return fmt.Sprintf("%s; the client's stats handler heard %v; the server's %v", out, client, ss.drain()), client
				}
				var want string
				for try := 1; ; try++ {
					cs, ss := newKindsRecorder(), newKindsRecorder()
					cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) },
						[]grpc.ServerOption{grpc.StatsHandler(ss)}, []grpc.DialOption{grpc.WithStatsHandler(cs), grpc.WithAuthority("inproc")})
					var client []string
					if want, client = run(t, cc, cs, ss); hasEvent(client, "OutPayload") && requestFirst(client, nil) {
						break
					}
					if try == 10 {
						t.Fatalf("grpc-go: the answer always came before the request was written, in %d tries: %s", try, want)
					}
				}
				t.Logf("grpc-go: %s", want)
				forEachMode(t, func(t *testing.T, m testMode) {
					cs, ss := newKindsRecorder(), newKindsRecorder()
					ch := newChannel(t, m, inproc.WithClientStatsHandler(cs), inproc.WithServerStatsHandler(ss))
					echov1.RegisterEchoServer(ch, echo.Server{})
					if got, _ := run(t, ch, cs, ss); got != want {
						t.Errorf("inproc:  %s\ngrpc-go: %s", got, want)
					}
				})
			})
		}
	}
}
