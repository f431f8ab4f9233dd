package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// binValue is a -bin value that is not ASCII, nor valid UTF-8.
var binValue = string([]byte{0x00, 0xff, 0x80, 0xfe, 'a', 0x01, 0xc3})

// wantMD fails the test unless md has exactly want's values under want's
// keys, and none of the absent keys. Other keys (content-type, say) are
// allowed.
func wantMD(t *testing.T, what string, md, want metadata.MD, absent ...string) {
	t.Helper()
	for k, v := range want {
		if got := md[k]; !slices.Equal(got, v) {
			t.Errorf("%s[%q] = %q, want %q", what, k, got, v)
		}
	}
	for _, k := range absent {
		if got, ok := md[k]; ok {
			t.Errorf("%s has %q = %q, want no such key", what, k, got)
		}
	}
}

// TestIncomingMetadata checks that outgoing metadata arrives as incoming
// metadata, and that the handler changing its copy changes neither the
// client's metadata nor what a later call sends.
func TestIncomingMetadata(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan metadata.MD, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			md, ok := metadata.FromIncomingContext(ctx)
			if !ok {
				return status.Error(codes.Internal, "no incoming metadata")
			}
			seen <- md.Copy()
			// Change everything the handler can reach.
			for k, vs := range md {
				for i := range vs {
					vs[i] = "mutated"
				}
				md[k] = append(vs, "appended")
			}
			md.Set("added", "by-handler")
			return nil
		}))
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				sent := metadata.MD{"k1": {"v1", "v2"}, "k2-bin": {binValue}}
				orig := sent.Copy()
				ctx := metadata.NewOutgoingContext(timeoutCtx(t), sent)
				ctx = metadata.AppendToOutgoingContext(ctx, "k3", "v3", "k1", "v4")
				want := metadata.MD{"k1": {"v1", "v2", "v4"}, "k2-bin": {binValue}, "k3": {"v3"}}
				for i := range 2 {
					if err := kind.call(ctx, c); err != nil {
						t.Fatal(err)
					}
					wantMD(t, "incoming metadata", receive(t, seen, "the handler"), want, "added")
					if i == 0 && !equalMD(sent, orig) {
						t.Errorf("the client's metadata changed to %v, want %v", sent, orig)
					}
				}
				if out, _ := metadata.FromOutgoingContext(ctx); !equalMD(out, want) {
					t.Errorf("the client's outgoing metadata is now %v, want %v", out, want)
				}
			})
		}
	})
}

func equalMD(a, b metadata.MD) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestStreamHeaderTrailer checks that a streaming handler's header reaches
// stream.Header() as soon as it is sent, while the handler still runs, and
// its trailer reaches stream.Trailer() at the end, also when the handler
// fails; -bin values survive both. SetHeader after SendHeader fails.
//
// While Header() waits, the client-streaming and bidi handlers wait in Recv
// for the client's first message. The server-streaming handler waits for
// the test instead, with Isolated execution only: an Inline handler that
// blocks outside gRPC blocks its caller, by design.
func TestStreamHeaderTrailer(t *testing.T) {
	wantHeader := metadata.MD{"h1": {"a", "b"}, "h2": {"c"}, "h3": {"d"}, "h-bin": {binValue}}
	wantTrailer := metadata.MD{"t1": {"x", "y"}, "t-bin": {binValue}}
	type step struct {
		headerSent chan struct{}
		proceed    chan struct{} // nil: do not wait
		lateErr    chan error    // SetHeader after SendHeader
		fail       bool
	}
	// before runs before the handler's messages, after at its end.
	before := func(st *step, s grpc.ServerStream) {
		_ = s.SetHeader(metadata.Pairs("h1", "a"))
		_ = s.SetHeader(metadata.Pairs("h1", "b", "h-bin", binValue))
		_ = grpc.SetHeader(s.Context(), metadata.Pairs("h2", "c"))
		_ = s.SendHeader(metadata.Pairs("h3", "d"))
		st.lateErr <- s.SetHeader(metadata.Pairs("h4", "late"))
		s.SetTrailer(metadata.Pairs("t1", "x"))
		st.headerSent <- struct{}{}
		if st.proceed != nil {
			<-st.proceed
		}
	}
	after := func(st *step, s grpc.ServerStream) error {
		s.SetTrailer(metadata.Pairs("t1", "y", "t-bin", binValue))
		if st.fail {
			return status.Error(codes.Aborted, "failed at the end")
		}
		return nil
	}
	var st *step
	srv := &funcEcho{
		expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			before(st, s)
			if err := s.Send(&echov1.EchoResponse{Text: req.GetText()}); err != nil {
				return err
			}
			return after(st, s)
		},
		collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			before(st, s)
			for {
				_, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
			}
			if err := after(st, s); err != nil {
				return err
			}
			return s.SendAndClose(&echov1.EchoResponse{Text: "hi"})
		},
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			before(st, s)
			if err := (echo.Server{}).Update(s); err != nil {
				return err
			}
			return after(st, s)
		},
	}
	type stream interface {
		Header() (metadata.MD, error)
		Trailer() metadata.MD
	}
	kinds := []struct {
		name string
		// waitsInRecv says the handler waits for the client while the
		// client reads the header.
		waitsInRecv bool
		open        func(ctx context.Context, c echov1.EchoClient) (stream, error)
		finish      func(s stream) error
	}{
		{"server-stream", false, func(ctx context.Context, c echov1.EchoClient) (stream, error) {
			return c.Expand(ctx, &echov1.EchoRequest{Text: "hi"})
		}, func(s stream) error {
			_, err := echotest.RecvAll(s.(grpc.ServerStreamingClient[echov1.EchoResponse]).Recv)
			return err
		}},
		{"client-stream", true, func(ctx context.Context, c echov1.EchoClient) (stream, error) {
			return c.Collect(ctx)
		}, func(s stream) error {
			cs := s.(grpc.ClientStreamingClient[echov1.EchoRequest, echov1.EchoResponse])
			if err := cs.Send(&echov1.EchoRequest{Text: "hi"}); err != nil {
				return err
			}
			_, err := cs.CloseAndRecv()
			return err
		}},
		{"bidi", true, func(ctx context.Context, c echov1.EchoClient) (stream, error) {
			return c.Update(ctx)
		}, func(s stream) error {
			b := s.(grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse])
			if err := b.Send(&echov1.EchoRequest{Text: "hi"}); err != nil {
				return err
			}
			if err := b.CloseSend(); err != nil {
				return err
			}
			_, err := echotest.RecvAll(b.Recv)
			return err
		}},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		for _, kind := range kinds {
			for _, fail := range []bool{false, true} {
				name := kind.name + "/ok"
				if fail {
					name = kind.name + "/error"
				}
				t.Run(name, func(t *testing.T) {
					st = &step{headerSent: make(chan struct{}, 1), lateErr: make(chan error, 1), fail: fail}
					waitForTest := !kind.waitsInRecv && isIsolated(t, m)
					proceed := func() {}
					if waitForTest {
						st.proceed = make(chan struct{})
						proceed = sync1(st.proceed)
						t.Cleanup(proceed)
					}
					s, err := kind.open(timeoutCtx(t), c)
					if err != nil {
						t.Fatal(err)
					}
					if waitForTest {
						receive(t, st.headerSent, "the handler to send its header")
					}
					type hdr struct {
						md  metadata.MD
						err error
					}
					hc := make(chan hdr, 1)
					go func() {
						md, err := s.Header()
						hc <- hdr{md, err}
					}()
					h := receive(t, hc, "Header() while the handler waits")
					proceed()
					if h.err != nil {
						t.Fatalf("Header: %v", h.err)
					}
					wantMD(t, "header", h.md, wantHeader, "h4", "t1")
					err = kind.finish(s)
					if fail {
						wantCode(t, "stream", err, codes.Aborted)
					} else if err != nil {
						t.Fatal(err)
					}
					// An Inline handler hands back at SendHeader and runs on
					// only as the client reads on.
					if err := receive(t, st.lateErr, "SetHeader after SendHeader"); err == nil {
						t.Error("SetHeader after SendHeader succeeded, want an error")
					}
					wantMD(t, "trailer", s.Trailer(), wantTrailer, "h1")
				})
			}
		}
	})
}

// sync1 returns a function that closes c the first time it is called.
func sync1(c chan struct{}) func() {
	done := false
	return func() {
		if !done {
			done = true
			close(c)
		}
	}
}

// TestUnaryHeaderTrailer checks grpc.SetHeader, grpc.SendHeader and
// grpc.SetTrailer in a unary handler, and the grpc.Header and grpc.Trailer
// call options, for a call that succeeds and one that fails.
func TestUnaryHeaderTrailer(t *testing.T) {
	wantHeader := metadata.MD{"h1": {"a", "b"}, "h2": {"c"}, "h-bin": {binValue}}
	wantTrailer := metadata.MD{"t1": {"x", "y"}, "t-bin": {binValue}}
	forEachMode(t, func(t *testing.T, m testMode) {
		var fail bool
		lateErrs := make(chan [2]error, 1)
		c, _ := newEcho(t, m, &funcEcho{get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if err := grpc.SetHeader(ctx, metadata.Pairs("h1", "a")); err != nil {
				return nil, err
			}
			if err := grpc.SetHeader(ctx, metadata.Pairs("h1", "b", "h-bin", binValue)); err != nil {
				return nil, err
			}
			if err := grpc.SendHeader(ctx, metadata.Pairs("h2", "c")); err != nil {
				return nil, err
			}
			lateErrs <- [2]error{
				grpc.SetHeader(ctx, metadata.Pairs("h3", "late")),
				grpc.SendHeader(ctx, metadata.Pairs("h4", "again")),
			}
			if err := grpc.SetTrailer(ctx, metadata.Pairs("t1", "x")); err != nil {
				return nil, err
			}
			if err := grpc.SetTrailer(ctx, metadata.Pairs("t1", "y", "t-bin", binValue)); err != nil {
				return nil, err
			}
			if fail {
				return nil, status.Error(codes.Aborted, "failed at the end")
			}
			return &echov1.EchoResponse{Text: req.GetText()}, nil
		}})
		for _, f := range []bool{false, true} {
			name := "ok"
			if f {
				name = "error"
			}
			t.Run(name, func(t *testing.T) {
				fail = f
				var header, trailer metadata.MD
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "hi"}, grpc.Header(&header), grpc.Trailer(&trailer))
				if fail {
					wantCode(t, "Get", err, codes.Aborted)
				} else if err != nil {
					t.Fatal(err)
				}
				late := receive(t, lateErrs, "the handler")
				if late[0] == nil {
					t.Error("grpc.SetHeader after grpc.SendHeader succeeded, want an error")
				}
				if late[1] == nil {
					t.Error("a second grpc.SendHeader succeeded, want an error")
				}
				wantMD(t, "header", header, wantHeader, "h3", "h4", "t1")
				wantMD(t, "trailer", trailer, wantTrailer, "h1")
			})
		}
	})
}

// TestPeer checks that the handler's context has a peer, and that the
// grpc.Peer call option fills one in, for every kind of method.
func TestPeer(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan *peer.Peer, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			p, _ := peer.FromContext(ctx)
			seen <- p
			return nil
		}))
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				var p peer.Peer
				if err := kind.call(timeoutCtx(t), c, grpc.Peer(&p)); err != nil {
					t.Fatal(err)
				}
				if hp := receive(t, seen, "the handler"); hp == nil || hp.Addr == nil {
					t.Errorf("handler's peer.FromContext = %v, want a peer with an address", hp)
				}
				if p.Addr == nil {
					t.Errorf("grpc.Peer gave %+v, want a peer with an address", p)
				}
			})
		}
	})
}

// TestMethodInHandler checks grpc.Method and grpc.ServerTransportStream in
// the handler's context.
func TestMethodInHandler(t *testing.T) {
	type methods struct{ method, stream string }
	want := map[string]string{
		"unary":         echov1.Echo_Get_FullMethodName,
		"server-stream": echov1.Echo_Expand_FullMethodName,
		"client-stream": echov1.Echo_Collect_FullMethodName,
		"bidi":          echov1.Echo_Update_FullMethodName,
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan methods, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			var got methods
			got.method, _ = grpc.Method(ctx)
			if ts := grpc.ServerTransportStreamFromContext(ctx); ts != nil {
				got.stream = ts.Method()
			}
			seen <- got
			return nil
		}))
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				if err := kind.call(timeoutCtx(t), c); err != nil {
					t.Fatal(err)
				}
				got := receive(t, seen, "the handler")
				if got.method != want[kind.name] || got.stream != want[kind.name] {
					t.Errorf("grpc.Method = %q, ServerTransportStream.Method = %q, want %q", got.method, got.stream, want[kind.name])
				}
			})
		}
	})
}

// TestInvalidOutgoingMetadata checks that metadata grpc-go refuses to send
// fails the call here too, with the same code, before any handler runs,
// and that metadata it sends is sent. grpc-go over bufconn is the
// reference.
func TestInvalidOutgoingMetadata(t *testing.T) {
	cases := []struct {
		name    string
		md      metadata.MD // set directly, as a map
		wantErr bool
	}{
		{"bad-key", metadata.MD{"Bad Key!": {"v"}}, true},
		{"space-in-key", metadata.MD{"bad key": {"v"}}, true},
		{"upper-case-key", metadata.MD{"Upper": {"v"}}, true},
		{"empty-key", metadata.MD{"": {"v"}}, true},
		{"control-char-value", metadata.MD{"k": {"a\x01b"}}, true},
		{"non-ascii-value", metadata.MD{"k": {"é"}}, true},
		{"binary-value-bin-key", metadata.MD{"k-bin": {binValue}}, false},
		{"valid", metadata.MD{"a-b_c.d9": {"printable ~ value"}}, false},
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }, nil, nil))
	forEachMode(t, func(t *testing.T, m testMode) {
		calls := make(chan struct{}, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(context.Context) error {
			calls <- struct{}{}
			return nil
		}))
		for _, tc := range cases {
			for _, kind := range echoKinds {
				t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
					refErr := kind.call(metadata.NewOutgoingContext(timeoutCtx(t), tc.md), ref)
					if (refErr != nil) != tc.wantErr {
						t.Fatalf("grpc-go gives %v; the test expects an error: %v", refErr, tc.wantErr)
					}
					err := kind.call(metadata.NewOutgoingContext(timeoutCtx(t), tc.md), c)
					if tc.wantErr {
						wantCode(t, "call", err, status.Code(refErr))
						select {
						case <-calls:
							t.Error("the handler ran")
						default: // a handler that ran signalled before its response
						}
						return
					}
					if err != nil {
						t.Fatalf("call failed: %v; grpc-go sends this metadata", err)
					}
					receive(t, calls, "the handler")
				})
			}
		}
	})
}

// TestMetadataKeyWithoutValuesAsGRPC: a key with no values, in a
// request's metadata or in a header or trailer a handler sets. grpc-go's
// transports write a field per value (http2_client.go createHeaderFields,
// http2_server.go appendHeaderFieldsFromMD), so such a key never reaches
// the other side (not even "connection", which would fail the call); a
// header that holds one is still a header, sent apart from the trailer.
// Each handler also fails a second call, without a response.
func TestMetadataKeyWithoutValuesAsGRPC(t *testing.T) {
	saw := make(chan []string, 1)
	incoming := func(ctx context.Context) {
		md, _ := metadata.FromIncomingContext(ctx)
		saw <- keys(md, "grpc-accept-encoding") // sent only for compressors grpc-go knows of
	}
	end := func(text string) error {
		if text == "fail" {
			return status.Error(codes.NotFound, "no")
		}
		return nil
	}
	srv := &funcEcho{
		get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			incoming(ctx)
			if err := grpc.SetHeader(ctx, metadata.MD{"h": {}}); err != nil {
				return nil, err
			}
			if err := grpc.SetTrailer(ctx, metadata.MD{"t": {}}); err != nil {
				return nil, err
			}
			if err := end(req.GetText()); err != nil {
				return nil, err
			}
			return &echov1.EchoResponse{Text: "ok"}, nil
		},
		expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			incoming(s.Context())
			if err := s.SetHeader(metadata.MD{"h": {}}); err != nil {
				return err
			}
			s.SetTrailer(metadata.MD{"t": {}})
			if err := end(req.GetText()); err != nil {
				return err
			}
			return s.Send(&echov1.EchoResponse{Text: "ok"})
		},
	}
	run := func(t *testing.T, c echov1.EchoClient) string {
		var out []string
		for _, text := range []string{"ok", "fail"} {
			ctx := metadata.NewOutgoingContext(timeoutCtx(t), metadata.MD{"n": {}, "connection": {}, "v": {"1"}})
			var h, tr metadata.MD
			_, err := c.Get(ctx, &echov1.EchoRequest{Text: text}, grpc.Header(&h), grpc.Trailer(&tr))
			out = append(out, fmt.Sprintf("unary/%s: code=%v handler saw %v, header %v (nil=%v), trailer %v", text,
				status.Code(err), receive(t, saw, "the handler"), keys(h), h == nil, keys(tr)))
			s, err := c.Expand(ctx, &echov1.EchoRequest{Text: text})
			if err != nil {
				t.Fatal(err)
			}
			h, _ = s.Header()
			_, err = echotest.RecvAll(s.Recv)
			out = append(out, fmt.Sprintf("stream/%s: code=%v handler saw %v, header %v (nil=%v), trailer %v", text,
				status.Code(err), receive(t, saw, "the handler"), keys(h), h == nil, keys(s.Trailer())))
		}
		return strings.Join(out, "\n")
	}
	want := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go:\n%s", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		if got := run(t, c); got != want {
			t.Errorf("inproc:\n%s\ngrpc-go:\n%s", got, want)
		}
	})
}

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
