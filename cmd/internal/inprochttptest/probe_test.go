package inprochttptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// probe is an Echo service on connect-go whose requests say what it does,
// so that one handler exercises every part of a call:
//
//   - "error CODE": fail with CODE, a message, metadata and a detail;
//   - "block": wait for the call's context to end and report it on
//     ctxEnded (a server stream first sends one message; a bidi stream
//     waits in its next receive);
//   - "block-ignore": as block, then ignore the end until release closes,
//     so that only the transport can return to the client;
//   - "panic": panic;
//   - anything else: echo it, with header X-Echo (the request's, echoed)
//     and X-Bin-Bin (binary), and trailer X-Trailer.
type probe struct {
	started  chan struct{} // one value per blocking call that started
	ctxEnded chan error    // the error of each blocking call's context, as it ends
	release  chan struct{}
}

func newProbe() *probe {
	return &probe{started: make(chan struct{}, 16), ctxEnded: make(chan error, 16), release: make(chan struct{})}
}

var _ echov1connect.EchoHandler = (*probe)(nil)

// handler is the probe's http.Handler, with connect-go's default options.
func (p *probe) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(echov1connect.NewEchoHandler(p))
	return mux
}

// answer sets the header and trailer of a successful call.
func answer(reqHeader, header, trailer http.Header) {
	header.Set("X-Echo", reqHeader.Get("X-Echo"))
	header.Set("X-Bin-Bin", connect.EncodeBinaryHeader([]byte{0, 1, 254, 255}))
	trailer.Set("X-Trailer", "end")
}

// failure is the error of "error CODE", or nil if text is not that.
func failure(text string) error {
	name, ok := strings.CutPrefix(text, "error ")
	if !ok {
		return nil
	}
	var code connect.Code
	if err := code.UnmarshalText([]byte(name)); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("no code %q", name))
	}
	err := connect.NewError(code, errors.New("failure: "+name))
	err.Meta().Set("X-Err-Meta", "meta")
	if detail, derr := connect.NewErrorDetail(&echov1.EchoResponse{Text: "detail"}); derr == nil {
		err.AddDetail(detail)
	}
	return err
}

// block waits for ctx to end and reports it; if ignore, it then waits for
// release too.
func (p *probe) block(ctx context.Context, ignore bool) error {
	p.started <- struct{}{}
	<-ctx.Done()
	p.ctxEnded <- ctx.Err()
	if ignore {
		<-p.release
	}
	return ctx.Err()
}

func (p *probe) Get(ctx context.Context, req *connect.Request[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	text := req.Msg.GetText()
	switch text {
	case "block", "block-ignore":
		return nil, p.block(ctx, text == "block-ignore")
	case "panic":
		panic("the probe panics")
	}
	if err := failure(text); err != nil {
		return nil, err
	}
	resp := connect.NewResponse(&echov1.EchoResponse{Text: text})
	answer(req.Header(), resp.Header(), resp.Trailer())
	return resp, nil
}

// Expand sends the words of the text; "error-after N CODE" sends N words
// of its own first.
func (p *probe) Expand(ctx context.Context, req *connect.Request[echov1.EchoRequest], stream *connect.ServerStream[echov1.EchoResponse]) error {
	text := req.Msg.GetText()
	if text == "block" || text == "block-ignore" {
		if err := stream.Send(&echov1.EchoResponse{Text: "started"}); err != nil {
			return err
		}
		return p.block(ctx, text == "block-ignore")
	}
	answer(req.Header(), stream.ResponseHeader(), stream.ResponseTrailer())
	if rest, ok := strings.CutPrefix(text, "error-after "); ok {
		n, code, _ := strings.Cut(rest, " ")
		count, _ := strconv.Atoi(n)
		for i := range count {
			if err := stream.Send(&echov1.EchoResponse{Text: strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return failure("error " + code)
	}
	for _, w := range strings.Fields(text) {
		if err := stream.Send(&echov1.EchoResponse{Text: w}); err != nil {
			return err
		}
	}
	return nil
}

// Collect joins the texts it receives; a text "error CODE" fails the call
// once the client has sent everything.
func (p *probe) Collect(ctx context.Context, stream *connect.ClientStream[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	var texts []string
	var fail error
	for stream.Receive() {
		text := stream.Msg().GetText()
		if text == "block" {
			return nil, p.block(ctx, false)
		}
		if err := failure(text); err != nil && fail == nil {
			fail = err
		}
		texts = append(texts, text)
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if fail != nil {
		return nil, fail
	}
	resp := connect.NewResponse(&echov1.EchoResponse{Text: strings.Join(texts, " ")})
	answer(stream.RequestHeader(), resp.Header(), resp.Trailer())
	return resp, nil
}

// Update answers each text as it arrives; "error CODE" ends the call, and
// "block" waits for the end of its context.
func (p *probe) Update(ctx context.Context, stream *connect.BidiStream[echov1.EchoRequest, echov1.EchoResponse]) error {
	answer(stream.RequestHeader(), stream.ResponseHeader(), stream.ResponseTrailer())
	for {
		req, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		text := req.GetText()
		if text == "block" {
			return p.block(ctx, false)
		}
		if err := failure(text); err != nil {
			return err
		}
		if err := stream.Send(&echov1.EchoResponse{Text: text}); err != nil {
			return err
		}
	}
}
