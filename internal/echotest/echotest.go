// Package echotest holds what the tests of several packages need to drive
// the Echo service.
package echotest

import (
	"errors"
	"io"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// RecvAll receives until the end of a stream of Echo responses and returns
// their texts, with the error that ended it unless that was io.EOF.
func RecvAll(recv func() (*echov1.EchoResponse, error)) ([]string, error) {
	var texts []string
	for {
		r, err := recv()
		if errors.Is(err, io.EOF) {
			return texts, nil
		}
		if err != nil {
			return texts, err
		}
		texts = append(texts, r.GetText())
	}
}
