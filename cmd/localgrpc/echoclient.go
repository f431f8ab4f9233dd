package main

import (
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
)

// newEchoClient returns a client of stack for the server at addr, secured
// as sec says (nil: plaintext on this machine, as localgrpc.NewClient's
// default).
func newEchoClient(stack, addr string, compress bool, sec *securityFlags) (echoclient.Client, error) {
	if sec == nil {
		sec = &securityFlags{}
	}
	a, err := localgrpc.ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	if stack == echoclient.GRPC {
		copts, err := sec.grpcOptions(a)
		if err != nil {
			return nil, err
		}
		cc, err := localgrpc.NewClient(addr, copts...)
		if err != nil {
			return nil, err
		}
		return echoclient.NewGRPC(cc, compress), nil
	}
	hc, base, err := sec.httpClient(addr, a)
	if err != nil {
		return nil, err
	}
	return echoclient.NewConnect(stack, hc, base, compress)
}
