package inproc_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// echoOracle is an Echo client of srv through grpc-go over bufconn.
func echoOracle(t *testing.T, srv echov1.EchoServer, sopts []grpc.ServerOption, dopts ...grpc.DialOption) echov1.EchoClient {
	t.Helper()
	return echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, sopts, dopts))
}

// headerResult is what a client's Header() returned.
type headerResult struct {
	nilMD bool
	md    metadata.MD
	code  codes.Code
	isErr bool
}

func (h headerResult) String() string {
	return fmt.Sprintf("md=%v (nil=%v) err=%v code=%v", h.md, h.nilMD, h.isErr, h.code)
}

func headerOf(md metadata.MD, err error) headerResult {
	return headerResult{nilMD: md == nil, md: md, code: status.Code(err), isErr: err != nil}
}

// blockedBidi is a bidi handler that waits in Recv until the call ends.
func blockedBidi() *funcEcho {
	return &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		for {
			if _, err := s.Recv(); err != nil {
				return err
			}
		}
	}}
}

// TestHeaderAfterCancelAsGRPC: a client stream's Header() called after
// its context was cancelled, before any header came. grpc-go's
// clientStream.Header never returns an error: it finishes the stream with
// it and returns (nil, nil), "the user should get it by calling Recv()"
// (stream.go, clientStream.Header).
func TestHeaderAfterCancelAsGRPC(t *testing.T) {
	run := func(t *testing.T, c echov1.EchoClient) (headerResult, error) {
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		s, err := c.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		h := headerOf(s.Header())
		_, rerr := s.Recv()
		return h, rerr
	}
	want, wantRecv := run(t, echoOracle(t, blockedBidi(), nil))
	t.Logf("grpc-go: Header %v; Recv %v", want, wantRecv)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, blockedBidi())
		got, gotRecv := run(t, c)
		if got.isErr != want.isErr || got.nilMD != want.nilMD {
			t.Errorf("Header() after cancel: %v; grpc-go: %v", got, want)
		}
		wantCode(t, "Recv after cancel", gotRecv, status.Code(wantRecv))
	})
}

// TestHeaderOfUnknownMethodAsGRPC: Header() of a stream to a method the
// server does not have. grpc-go gets a trailers-only Unimplemented and its
// Header returns (nil, nil); Recv then reports Unimplemented.
func TestHeaderOfUnknownMethodAsGRPC(t *testing.T) {
	desc := &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}
	run := func(t *testing.T, cc grpc.ClientConnInterface) (headerResult, error) {
		s, err := cc.NewStream(timeoutCtx(t), desc, "/echo.v1.Echo/NoSuchMethod")
		if err != nil {
			t.Fatal(err)
		}
		h := headerOf(s.Header())
		return h, s.RecvMsg(new(echov1.EchoResponse))
	}
	cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, &funcEcho{}) }, nil, nil)
	want, wantRecv := run(t, cc)
	t.Logf("grpc-go: Header %v; Recv %v", want, wantRecv)
	forEachMode(t, func(t *testing.T, m testMode) {
		_, ch := newEcho(t, m, &funcEcho{})
		got, gotRecv := run(t, ch)
		if got.isErr != want.isErr || got.nilMD != want.nilMD {
			t.Errorf("Header() of an unknown method: %v; grpc-go: %v", got, want)
		}
		wantCode(t, "Recv of an unknown method", gotRecv, status.Code(wantRecv))
	})
}

// TestHeaderOptionTrailersOnlyAsGRPC: grpc.Header(&md) on a unary call
// whose handler fails without a header (trailers only). grpc-go sets md
// to what the transport stream's Header returns: nil.
func TestHeaderOptionTrailersOnlyAsGRPC(t *testing.T) {
	srv := &funcEcho{get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		return nil, status.Error(codes.NotFound, "no")
	}}
	run := func(t *testing.T, c echov1.EchoClient) (metadata.MD, metadata.MD) {
		hdr := metadata.MD{"stale": {"x"}}
		var trl metadata.MD
		_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.Header(&hdr), grpc.Trailer(&trl))
		if status.Code(err) != codes.NotFound {
			t.Fatalf("Get: %v, want NotFound", err)
		}
		return hdr, trl
	}
	wantH, wantT := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: header %#v trailer %v", wantH, wantT)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		gotH, gotT := run(t, c)
		if (gotH == nil) != (wantH == nil) {
			t.Errorf("grpc.Header of a trailers-only response: %#v (nil=%v); grpc-go: %#v (nil=%v)", gotH, gotH == nil, wantH, wantH == nil)
		}
		if !maps.EqualFunc(gotT, wantT, slices.Equal) {
			t.Errorf("trailer %v; grpc-go %v", gotT, wantT)
		}
	})
}

// TestStatusDetailsInTrailerAsGRPC: a handler fails with a status that
// has details. grpc-go's server sends them as grpc-status-details-bin in
// the trailer, and grpc-go's client keeps that key in the trailer it
// gives (http2_client.go operateHeaders: only content-type, grpc-status,
// grpc-message, grpc-encoding and :status are taken out).
func TestStatusDetailsInTrailerAsGRPC(t *testing.T) {
	st, err := status.New(codes.FailedPrecondition, "detailed").WithDetails(&errdetails.ErrorInfo{Reason: "why"})
	if err != nil {
		t.Fatal(err)
	}
	srv := &funcEcho{
		get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) { return nil, st.Err() },
		expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			if err := s.Send(&echov1.EchoResponse{Text: "one"}); err != nil {
				return err
			}
			return st.Err()
		},
	}
	run := func(t *testing.T, c echov1.EchoClient) (unary, stream metadata.MD) {
		_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.Trailer(&unary))
		if status.Code(err) != codes.FailedPrecondition || len(status.Convert(err).Details()) != 1 {
			t.Fatalf("Get: %v, want FailedPrecondition with one detail", err)
		}
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = echotest.RecvAll(s.Recv)
		if status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("Expand: %v", err)
		}
		return unary, s.Trailer()
	}
	wantU, wantS := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: unary trailer keys %v, stream trailer keys %v", keys(wantU), keys(wantS))
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		gotU, gotS := run(t, c)
		if g, w := keys(gotU), keys(wantU); !slices.Equal(g, w) {
			t.Errorf("unary trailer keys %v; grpc-go %v", g, w)
		}
		if g, w := keys(gotS), keys(wantS); !slices.Equal(g, w) {
			t.Errorf("stream trailer keys %v; grpc-go %v", g, w)
		}
	})
}

// TestHandlerHeaderValidationAsGRPC: a stream handler's
// ServerStream.SetHeader and SendHeader validate the metadata, as grpc-go's
// serverStream does (stream.go: imetadata.Validate, Internal).
func TestHandlerHeaderValidationAsGRPC(t *testing.T) {
	type res struct{ set, send codes.Code }
	got := make(chan res, 1)
	srv := &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
		var r res
		r.set = status.Code(s.SetHeader(metadata.MD{"bad key": {"v"}}))
		r.send = status.Code(s.SendHeader(metadata.MD{"k": {"line\nbreak"}}))
		got <- r
		return nil
	}}
	run := func(t *testing.T, c echov1.EchoClient) res {
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = echotest.RecvAll(s.Recv)
		return receive(t, got, "the handler")
	}
	want := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: %+v", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		if g := run(t, c); g != want {
			t.Errorf("SetHeader/SendHeader of invalid metadata: %+v; grpc-go %+v", g, want)
		}
	})
}

// TestHandlerHeaderAfterClientLeftAsGRPC: a handler that sets or sends
// its header, or sets its trailer, after its client cancelled (the
// handler runs, and the client waits in Recv, before the cancel, so an
// Inline handler runs too). grpc-go's stream is done by then (its state is
// done before its context ends), so SendHeader fails with the context's
// code, Canceled, and SetHeader, grpc.SetHeader and grpc.SetTrailer with
// Internal (transport.ErrIllegalHeaderWrite).
func TestHandlerHeaderAfterClientLeftAsGRPC(t *testing.T) {
	type res struct{ setHeader, ctxSetHeader, setTrailer, sendHeader codes.Code }
	var mu sync.Mutex
	var got chan res
	var running chan struct{}
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		mu.Lock()
		g, r := got, running
		mu.Unlock()
		close(r)
		<-s.Context().Done()
		var out res
		out.setHeader = status.Code(s.SetHeader(metadata.Pairs("a", "b")))
		out.ctxSetHeader = status.Code(grpc.SetHeader(s.Context(), metadata.Pairs("a", "b")))
		out.setTrailer = status.Code(grpc.SetTrailer(s.Context(), metadata.Pairs("a", "b")))
		out.sendHeader = status.Code(s.SendHeader(metadata.Pairs("c", "d")))
		g <- out
		return nil
	}}
	run := func(t *testing.T, c echov1.EchoClient) res {
		mu.Lock()
		got, running = make(chan res, 1), make(chan struct{})
		g, r := got, running
		mu.Unlock()
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		s, err := c.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recvd := async(func() error { _, err := s.Recv(); return err })
		receive(t, r, "the handler to run")
		cancel()
		wantCode(t, "Recv", receive(t, recvd, "Recv"), codes.Canceled)
		return receive(t, g, "the handler")
	}
	want := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: %+v", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		if g := run(t, c); g != want {
			t.Errorf("after the client left: %+v; grpc-go %+v", g, want)
		}
	})
}

// TestUnaryHeaderWithoutSetHeaderAsGRPC: a unary handler that succeeds
// without setting a header. Over HTTP/2 the response message needs a
// header frame before it, so grpc-go's client gets a header with the
// content-type, and a trailer without it; it is not trailers only.
func TestUnaryHeaderWithoutSetHeaderAsGRPC(t *testing.T) {
	srv := &funcEcho{}
	run := func(t *testing.T, c echov1.EchoClient) (hdr, trl metadata.MD) {
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.Header(&hdr), grpc.Trailer(&trl)); err != nil {
			t.Fatal(err)
		}
		return hdr, trl
	}
	wantH, wantT := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: header %v trailer %v", wantH, wantT)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		gotH, gotT := run(t, c)
		if !maps.EqualFunc(gotH, wantH, slices.Equal) || (gotH == nil) != (wantH == nil) {
			t.Errorf("header %#v; grpc-go %#v", gotH, wantH)
		}
		if !maps.EqualFunc(gotT, wantT, slices.Equal) {
			t.Errorf("trailer %v; grpc-go %v", gotT, wantT)
		}
	})
}

// TestTrailerAfterClientLeftAsGRPC: a client cancels while its bidi
// handler runs; the handler then sets a trailer and returns. Over a
// socket the client's stream ended at the cancel and no trailer reached
// it: grpc-go's Trailer() is empty. inproc's Trailer() reports whatever
// status the handler sends later, with the trailer set after the client
// left (and, for a handler that never sent a header, the content-type of
// a trailers-only response nobody received).
func TestTrailerAfterClientLeftAsGRPC(t *testing.T) {
	var mu sync.Mutex
	var running, returned chan struct{}
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		mu.Lock()
		r, d := running, returned
		mu.Unlock()
		defer close(d)
		close(r)
		<-s.Context().Done()
		s.SetTrailer(metadata.Pairs("late", "x"))
		return nil
	}}
	run := func(t *testing.T, c echov1.EchoClient, drained func()) metadata.MD {
		mu.Lock()
		running, returned = make(chan struct{}), make(chan struct{})
		r, d := running, returned
		mu.Unlock()
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		s, err := c.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recvd := async(func() error { _, err := s.Recv(); return err })
		receive(t, r, "the handler to run")
		cancel()
		wantCode(t, "Recv", receive(t, recvd, "Recv"), codes.Canceled)
		receive(t, d, "the handler to return")
		drained()
		return s.Trailer()
	}
	want := run(t, echoOracle(t, srv, nil), func() {})
	t.Logf("grpc-go: Trailer() %v", keys(want))
	forEachMode(t, func(t *testing.T, m testMode) {
		c, ch := newEcho(t, m, srv)
		got := run(t, c, ch.GracefulStop) // returns once the call is counted out
		if g, w := keys(got), keys(want); !slices.Equal(g, w) {
			t.Errorf("Trailer() after the client cancelled has keys %v; grpc-go %v", g, w)
		}
	})
}

// wireMDCases are headers and trailers a handler may set that grpc-go's
// server writes without checking them (grpc.SetHeader, grpc.SendHeader,
// grpc.SetTrailer and ServerStream.SetTrailer check nothing), and whose
// fate its client's HTTP/2 framer decides (x/net/http2 readMetaFrame): a
// field name that is not a lower-case token, or a value with a control
// character other than tab, fails the call; what HTTP/2 allows (bytes
// from 0x80, a tab, a token gRPC's own check would refuse) arrives. A key
// without values, or a -bin key, writes no such field.
var wireMDCases = []struct {
	name string
	md   metadata.MD
}{
	{"key-upper", metadata.MD{"Foo": {"a"}}},
	{"key-space", metadata.MD{"fo o": {"a"}}},
	{"key-empty", metadata.MD{"": {"a"}}},
	{"key-token", metadata.MD{"foo!": {"a"}}},
	{"key-upper-no-values", metadata.MD{"Foo": {}}},
	{"value-control", metadata.MD{"x": {"a\x01"}}},
	{"value-del", metadata.MD{"x": {"a\x7f"}}},
	{"value-newline", metadata.MD{"x": {"a\nb"}}},
	{"value-tab", metadata.MD{"x": {"a\tb"}}},
	{"value-obs-text", metadata.MD{"x": {"é"}}},
	{"value-bin", metadata.MD{"x-bin": {"a\x01\xff"}}},
}

// TestHandlerTrailerOnTheWireAsGRPC: a handler sets a trailer of
// wireMDCases with grpc.SetTrailer (unary) or ServerStream.SetTrailer
// (whose imetadata.Validate only logs), and ends well after a response or
// fails without one (trailers only). Where the client's framer refuses
// the trailer, grpc-go's call fails with Internal and the client gets no
// trailer.
func TestHandlerTrailerOnTheWireAsGRPC(t *testing.T) {
	for _, c := range wireMDCases {
		t.Run(c.name, func(t *testing.T) {
			srv := &funcEcho{
				get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					if err := grpc.SetTrailer(ctx, c.md); err != nil {
						return nil, err
					}
					if req.GetText() == "fail" {
						return nil, status.Error(codes.NotFound, "no")
					}
					return &echov1.EchoResponse{Text: "ok"}, nil
				},
				expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					s.SetTrailer(c.md)
					if req.GetText() == "fail" {
						return status.Error(codes.NotFound, "no")
					}
					return s.Send(&echov1.EchoResponse{Text: "ok"})
				},
			}
			run := func(t *testing.T, ec echov1.EchoClient) string {
				var out []string
				for _, text := range []string{"ok", "fail"} {
					var h, tr metadata.MD
					_, err := ec.Get(timeoutCtx(t), &echov1.EchoRequest{Text: text}, grpc.Header(&h), grpc.Trailer(&tr))
					out = append(out, fmt.Sprintf("unary/%s: code=%v header=%s trailer=%s", text, status.Code(err), mdText(h), mdText(tr)))
					s, err := ec.Expand(timeoutCtx(t), &echov1.EchoRequest{Text: text})
					if err != nil {
						t.Fatal(err)
					}
					h, _ = s.Header()
					got, err := echotest.RecvAll(s.Recv)
					out = append(out, fmt.Sprintf("stream/%s: code=%v got=%v header=%s trailer=%s", text, status.Code(err), got, mdText(h), mdText(s.Trailer())))
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
		})
	}
}

// TestHandlerHeaderOnTheWireAsGRPC: a handler sets or sends a header of
// wireMDCases. grpc-go checks it only where ServerStream.SetHeader and
// SendHeader are called (stream.go serverStream: imetadata.Validate,
// Internal to the handler, nothing set); grpc.SetHeader and
// grpc.SendHeader, from a unary or a stream handler, reach the
// transport's stream, which checks nothing, and the header goes out as
// the client's framer then takes it: a value of bytes from 0x80 arrives,
// a field it refuses fails the call with Internal, with no header.
func TestHandlerHeaderOnTheWireAsGRPC(t *testing.T) {
	type setter struct {
		name string
		set  func(ctx context.Context, s grpc.ServerStream, md metadata.MD) error
	}
	setters := []setter{
		{"grpc.SetHeader", func(ctx context.Context, _ grpc.ServerStream, md metadata.MD) error { return grpc.SetHeader(ctx, md) }},
		{"grpc.SendHeader", func(ctx context.Context, _ grpc.ServerStream, md metadata.MD) error { return grpc.SendHeader(ctx, md) }},
		{"stream.SetHeader", func(_ context.Context, s grpc.ServerStream, md metadata.MD) error { return s.SetHeader(md) }},
		{"stream.SendHeader", func(_ context.Context, s grpc.ServerStream, md metadata.MD) error { return s.SendHeader(md) }},
	}
	for _, c := range wireMDCases {
		for _, set := range setters {
			t.Run(c.name+"/"+set.name, func(t *testing.T) {
				handlerSaw := make(chan codes.Code, 1)
				srv := &funcEcho{
					get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
						if strings.HasPrefix(set.name, "grpc.") {
							handlerSaw <- status.Code(set.set(ctx, nil, c.md))
						} else {
							handlerSaw <- codes.OK // a unary handler has no ServerStream
						}
						return &echov1.EchoResponse{Text: "ok"}, nil
					},
					expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
						handlerSaw <- status.Code(set.set(s.Context(), s, c.md))
						return s.Send(&echov1.EchoResponse{Text: "ok"})
					},
				}
				run := func(t *testing.T, ec echov1.EchoClient) string {
					var h metadata.MD
					_, err := ec.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.Header(&h))
					out := fmt.Sprintf("unary: handler's set=%v code=%v header=%s", receive(t, handlerSaw, "the unary handler"), status.Code(err), mdText(h))
					s, err := ec.Expand(timeoutCtx(t), &echov1.EchoRequest{})
					if err != nil {
						t.Fatal(err)
					}
					h, _ = s.Header()
					got, err := echotest.RecvAll(s.Recv)
					return out + fmt.Sprintf("\nstream: handler's set=%v code=%v got=%v header=%s", receive(t, handlerSaw, "the stream handler"), status.Code(err), got, mdText(h))
				}
				want := run(t, echoOracle(t, srv, nil))
				t.Logf("grpc-go:\n%s", want)
				forEachMode(t, func(t *testing.T, m testMode) {
					c, _ := newEcho(t, m, srv)
					if got := run(t, c); got != want {
						t.Errorf("inproc:\n%s\ngrpc-go:\n%s", got, want)
					}
				})
			})
		}
	}
}

// TestHandlerHeaderOnTheWireReplyAsGRPC: a unary handler sets or sends a
// header of wireMDCases and returns a response. grpc-go's client fails
// the call at the header and never reads the response: the reply the
// caller passed to Invoke stays as it was.
func TestHandlerHeaderOnTheWireReplyAsGRPC(t *testing.T) {
	for _, c := range wireMDCases {
		for _, send := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/send=%v", c.name, send), func(t *testing.T) {
				srv := &funcEcho{get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					if send {
						grpc.SendHeader(ctx, c.md)
					} else {
						grpc.SetHeader(ctx, c.md)
					}
					return &echov1.EchoResponse{Text: "ok"}, nil
				}}
				run := func(t *testing.T, cc grpc.ClientConnInterface) string {
					reply := new(echov1.EchoResponse)
					err := cc.Invoke(timeoutCtx(t), echov1.Echo_Get_FullMethodName, &echov1.EchoRequest{}, reply)
					return fmt.Sprintf("code=%v reply=%q", status.Code(err), reply.GetText())
				}
				want := run(t, realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, nil, nil))
				forEachMode(t, func(t *testing.T, m testMode) {
					_, ch := newEcho(t, m, srv)
					if got := run(t, ch); got != want {
						t.Errorf("inproc: %s; grpc-go: %s", got, want)
					}
				})
				// With a stats handler, the response crosses before the
				// client takes it.
				forEachMode(t, func(t *testing.T, m testMode) {
					_, ch := newEcho(t, m, srv, inproc.WithServerStatsHandler(oracleNoStats{}))
					if got := run(t, ch); got != want {
						t.Errorf("with a stats handler, inproc: %s; grpc-go: %s", got, want)
					}
				})
			})
		}
	}
}
