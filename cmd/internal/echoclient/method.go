package echoclient

import (
	"context"
	"fmt"
	"io"
	"strings"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// A Method is one of the Echo API's four.
type Method string

// The Echo API's methods.
const (
	Get     Method = "get"
	Expand  Method = "expand"
	Collect Method = "collect"
	Update  Method = "update"
)

// Methods are the Echo API's methods, in the API's order.
var Methods = []Method{Get, Expand, Collect, Update}

// ParseMethod takes a method as the command line names it, in any case.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown method %q: the methods are get, expand, collect and update", s)
}

// ClientStreams reports whether m takes a stream of requests.
func (m Method) ClientStreams() bool { return m == Collect || m == Update }

// Requests gives a call's requests in order, then io.EOF.
type Requests func(ctx context.Context) (*echov1.EchoRequest, error)

// List gives reqs, in order, to each call that reads it.
func List(reqs []*echov1.EchoRequest) Requests {
	i := 0
	return func(context.Context) (*echov1.EchoRequest, error) {
		if i == len(reqs) {
			return nil, io.EOF
		}
		i++
		return reqs[i-1], nil
	}
}

// Repeated is the requests of a call of m.
// It is one request of text, or count if m takes a stream.
func Repeated(m Method, text string, count int) []*echov1.EchoRequest {
	if !m.ClientStreams() {
		count = 1
	}
	reqs := make([]*echov1.EchoRequest, count)
	for i := range reqs {
		reqs[i] = &echov1.EchoRequest{Text: text}
	}
	return reqs
}

// An InputError is an error of the requests a call was given.
// It is not an error of the call itself.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }
