package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// dataSource is where -d takes requests: "-" is standard input, "@FILE" a
// file, anything else the JSON itself.
type dataSource struct {
	arg   string
	stdin io.Reader
}

// name is what errors call the source: each names it once.
func (d dataSource) name() string {
	switch {
	case d.arg == "-":
		return "standard input"
	case strings.HasPrefix(d.arg, "@"):
		return d.arg[1:]
	}
	return "-d"
}

// open returns the requests' reader.
func (d dataSource) open() (io.ReadCloser, error) {
	switch {
	case d.arg == "-":
		return io.NopCloser(d.stdin), nil
	case strings.HasPrefix(d.arg, "@"):
		f, err := os.Open(d.arg[1:])
		if err != nil {
			return nil, fmt.Errorf("-d: %w", err)
		}
		return f, nil
	default:
		return io.NopCloser(strings.NewReader(d.arg)), nil
	}
}

// readAll reads every request: JSON objects in protojson's form, one
// after another (one per line, or as they come).
func (d dataSource) readAll() ([]*echov1.EchoRequest, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var reqs []*echov1.EchoRequest
	dec := json.NewDecoder(r)
	for {
		req, err := decodeRequest(dec, d.name(), len(reqs)+1)
		if err == io.EOF {
			return reqs, nil
		}
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
}

// stream gives the requests as they are read, so that a bidirectional call
// fed from a terminal or a pipe answers each request as it comes. The
// reading goroutine ends at the end of the input, at its first error, or
// when ctx ends; one blocked reading a terminal then ends with the
// process, as nothing can interrupt its read.
func (d dataSource) stream(ctx context.Context) (echoclient.Requests, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	type item struct {
		req *echov1.EchoRequest
		err error
	}
	items := make(chan item)
	go func() {
		defer r.Close()
		dec := json.NewDecoder(r)
		for n := 1; ; n++ {
			req, err := decodeRequest(dec, d.name(), n)
			select {
			case items <- item{req, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var end error
	return func(ctx context.Context) (*echov1.EchoRequest, error) {
		if end != nil {
			return nil, end
		}
		select {
		case it := <-items:
			end = it.err
			return it.req, it.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, nil
}

// decodeRequest decodes the nth request from dec, read from name.
func decodeRequest(dec *json.Decoder, name string, n int) (*echov1.EchoRequest, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err == io.EOF {
		return nil, io.EOF
	} else if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: request %d is not JSON: %v (requests are protojson objects such as {\"text\": \"hello\"}; -d @FILE reads a file)", name, n, err)
		}
		return nil, fmt.Errorf("%s: request %d: %w", name, n, err)
	}
	req := new(echov1.EchoRequest)
	if err := protojson.Unmarshal(raw, req); err != nil {
		return nil, fmt.Errorf("%s: request %d is not an echo.v1.EchoRequest: %v", name, n, err)
	}
	return req, nil
}
