package bench

import (
	"fmt"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// unaryCase is W2: one op is one Echo Get with a small text, made by one
// of Config.Callers callers.
func unaryCase(cfg Config, im impl) func(b *testing.B) error {
	return func(b *testing.B) error {
		cl, ctx, err := setUp(b, im, nil)
		if err != nil {
			return err
		}
		req := &echov1.EchoRequest{Text: cfg.text()}
		ops := make([]func() error, cfg.Callers)
		for i := range ops {
			ops[i] = func() error {
				resp, err := cl.get.Get(ctx, req)
				if err != nil {
					return err
				}
				if resp.GetText() != req.GetText() {
					return fmt.Errorf("Get returned %q, want %q", resp.GetText(), req.GetText())
				}
				return nil
			}
		}
		return timed(b, ops)
	}
}
