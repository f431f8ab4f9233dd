package inprochttptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// An outcome is what a client saw of a call.
type outcome struct {
	Msgs    []string
	Code    string // "ok", or the error's code
	Message string // the error's message, if the handler made it
	Header  []string
	Trailer []string
	Meta    string // the error's X-Err-Meta
	Details []string
}

// seen records the parts of a call's end in o: err, the response header
// and trailer.
func (o *outcome) seen(err error, header, trailer http.Header) {
	o.Code = "ok"
	if err != nil {
		o.Code = connect.CodeOf(err).String()
		var ce *connect.Error
		if errors.As(err, &ce) {
			o.Message = ce.Message()
			o.Meta = ce.Meta().Get("X-Err-Meta")
			for _, d := range ce.Details() {
				v, derr := d.Value()
				o.Details = append(o.Details, fmt.Sprint(v, derr))
			}
		}
	}
	bin, _ := connect.DecodeBinaryHeader(header.Get("X-Bin-Bin"))
	o.Header = []string{header.Get("X-Echo"), fmt.Sprint(bin)}
	o.Trailer = []string{trailer.Get("X-Trailer")}
}

// A call is one way of calling the probe.
type call struct {
	name      string
	streaming bool // client or bidi streaming, which gRPC-Web clients do not do
	// reset: the call fails with a stream reset, whose message is the
	// transport's own.
	reset bool
	run   func(ctx context.Context, c echov1connect.EchoClient) outcome
}

// request returns a request of text with the header X-Echo.
func request(text string) *connect.Request[echov1.EchoRequest] {
	req := connect.NewRequest(&echov1.EchoRequest{Text: text})
	req.Header().Set("X-Echo", "echoed")
	return req
}

// answered is the outcome of a call answered by one response, or err.
func answered(resp *connect.Response[echov1.EchoResponse], err error) outcome {
	var o outcome
	if err != nil {
		o.seen(err, http.Header{}, http.Header{})
		return o
	}
	o.Msgs = []string{resp.Msg.GetText()}
	o.seen(nil, resp.Header(), resp.Trailer())
	return o
}

func unary(text string) func(context.Context, echov1connect.EchoClient) outcome {
	return func(ctx context.Context, c echov1connect.EchoClient) outcome {
		return answered(c.Get(ctx, request(text)))
	}
}

func serverStream(text string) func(context.Context, echov1connect.EchoClient) outcome {
	return func(ctx context.Context, c echov1connect.EchoClient) outcome {
		var o outcome
		s, err := c.Expand(ctx, request(text))
		if err != nil {
			o.seen(err, http.Header{}, http.Header{})
			return o
		}
		defer s.Close()
		for s.Receive() {
			o.Msgs = append(o.Msgs, s.Msg().GetText())
		}
		o.seen(s.Err(), s.ResponseHeader(), s.ResponseTrailer())
		return o
	}
}

func clientStream(texts ...string) func(context.Context, echov1connect.EchoClient) outcome {
	return func(ctx context.Context, c echov1connect.EchoClient) outcome {
		s := c.Collect(ctx)
		s.RequestHeader().Set("X-Echo", "echoed")
		for _, t := range texts {
			if err := s.Send(&echov1.EchoRequest{Text: t}); err != nil {
				break // CloseAndReceive tells why
			}
		}
		return answered(s.CloseAndReceive())
	}
}

// bidi sends each text and receives its answer before the next, as a
// ping-pong, then closes its side and receives the end.
func bidi(texts ...string) func(context.Context, echov1connect.EchoClient) outcome {
	return func(ctx context.Context, c echov1connect.EchoClient) outcome {
		var o outcome
		s := c.Update(ctx)
		defer s.CloseResponse()
		s.RequestHeader().Set("X-Echo", "echoed")
		var err error
		for _, t := range texts {
			if err = s.Send(&echov1.EchoRequest{Text: t}); err != nil {
				break
			}
			var resp *echov1.EchoResponse
			if resp, err = s.Receive(); err != nil {
				break
			}
			o.Msgs = append(o.Msgs, resp.GetText())
		}
		if err == nil || errors.Is(err, io.EOF) {
			s.CloseRequest()
			_, err = s.Receive()
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		o.seen(err, s.ResponseHeader(), s.ResponseTrailer())
		return o
	}
}

var calls = []call{
	{name: "unary", run: unary("hi")},
	{name: "unary-error", run: unary("error not_found")},
	{name: "unary-panic", reset: true, run: unary("panic")},
	{name: "server-stream", run: serverStream("a b c")},
	{name: "server-stream-empty", run: serverStream("")},
	{name: "server-stream-error", run: serverStream("error-after 2 permission_denied")},
	{name: "client-stream", streaming: true, run: clientStream("x", "y", "z")},
	{name: "client-stream-error", streaming: true, run: clientStream("x", "error aborted")},
	{name: "bidi", streaming: true, run: bidi("p", "q")},
	{name: "bidi-error", streaming: true, run: bidi("p", "error failed_precondition", "never sent")},
}

// Every call in every protocol looks the same in-process as over a unix
// socket: messages, codes, messages of errors, metadata, details, headers
// and trailers.
func TestSameCalls(t *testing.T) {
	for _, p := range protocols {
		for _, c := range calls {
			if c.streaming && p.name == "grpcweb" {
				continue
			}
			t.Run("protocol="+p.name+"/call="+c.name, func(t *testing.T) {
				var got []outcome
				for _, tr := range transports {
					hc, base := tr.client(t, newProbe())
					o := c.run(t.Context(), echov1connect.NewEchoClient(hc, base, p.opts...))
					if c.reset {
						o.Message = ""
					}
					got = append(got, o)
				}
				if !reflect.DeepEqual(got[0], got[1]) {
					t.Errorf("in-process:\n  %+v\nover a unix socket:\n  %+v", got[0], got[1])
				}
				if got[0].Code == "ok" && got[0].Trailer[0] != "end" && c.name != "server-stream-empty" {
					t.Errorf("no trailer: %+v", got[0])
				}
			})
		}
	}
}
