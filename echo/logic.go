package echo

import (
	"errors"
	"io"
	"strings"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// The Echo API's behaviour, written once over plain functions so that the
// grpc-go server here and the connect-go one of the CLI's module, whose
// stream types differ, share it.

// Get answers a Get.
func Get(req *echov1.EchoRequest) *echov1.EchoResponse {
	return &echov1.EchoResponse{Text: req.GetText()}
}

// Expand sends one response per space-separated word of req's text.
func Expand(req *echov1.EchoRequest, send func(*echov1.EchoResponse) error) error {
	for _, w := range strings.Fields(req.GetText()) {
		if err := send(&echov1.EchoResponse{Text: w}); err != nil {
			return err
		}
	}
	return nil
}

// Collect receives requests until recv returns io.EOF and joins their
// texts with spaces.
func Collect(recv func() (*echov1.EchoRequest, error)) (*echov1.EchoResponse, error) {
	var texts []string
	for {
		req, err := recv()
		if errors.Is(err, io.EOF) {
			return &echov1.EchoResponse{Text: strings.Join(texts, " ")}, nil
		}
		if err != nil {
			return nil, err
		}
		texts = append(texts, req.GetText())
	}
}

// Update answers each request with its text as it arrives, until recv
// returns io.EOF.
func Update(recv func() (*echov1.EchoRequest, error), send func(*echov1.EchoResponse) error) error {
	for {
		req, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := send(&echov1.EchoResponse{Text: req.GetText()}); err != nil {
			return err
		}
	}
}
