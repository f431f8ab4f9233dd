package inproc

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestGRPCProbes asserts that each probe of grpc-go's unexported names
// succeeds against the grpc-go this module builds with. Each probe falls
// back quietly where it fails, so the calls still pass: a grpc-go release
// that breaks one shows here, not as a slower or laxer call.
func TestGRPCProbes(t *testing.T) {
	t.Run("context-keys", func(t *testing.T) {
		keys := map[string]any{
			"metadata.FromIncomingContext":          incomingMDKey,
			"metadata.FromOutgoingContext":          outgoingMDKey,
			"peer.FromContext":                      peerKey,
			"grpc.ServerTransportStreamFromContext": streamKey,
			"credentials.RequestInfoFromContext":    requestInfoKey,
		}
		seen := map[any]string{}
		for name, k := range keys {
			if k == nil {
				t.Errorf("%s: the probe saw no key looked up", name)
				continue
			}
			if other, dup := seen[k]; dup {
				t.Errorf("%s and %s: the probes saw one key", name, other)
			}
			seen[k] = name
		}
		if !keysProbed {
			t.Error("keysProbed is false: handlers' contexts fall back to context.WithValue")
		}
	})
	t.Run("request-info", func(t *testing.T) {
		ctx := withRequestInfo(t.Context(), "/s/M")
		if _, ok := ctx.(*requestInfoContext); !ok {
			t.Fatal("withRequestInfo left the context as it was: per-call credentials see no RequestInfo")
		}
		if ri, ok := credentials.RequestInfoFromContext(ctx); !ok || ri.Method != "/s/M" {
			t.Errorf("RequestInfoFromContext = %+v, %v; want method /s/M", ri, ok)
		}
	})
	t.Run("raw-outgoing-metadata", func(t *testing.T) {
		if !rawMD.ok {
			t.Fatal("the MD of metadata.NewOutgoingContext was not found: upper-case keys pass in-process")
		}
		upper := metadata.NewOutgoingContext(t.Context(), metadata.MD{"Upper": {"v"}})
		if err := validateRawKeys(upper); status.Code(err) != codes.Internal {
			t.Errorf("validateRawKeys(MD{Upper}) = %v, want code Internal", err)
		}
		lower := metadata.NewOutgoingContext(t.Context(), metadata.MD{"lower": {"v"}})
		if err := validateRawKeys(lower); err != nil {
			t.Errorf("validateRawKeys(MD{lower}) = %v, want nil", err)
		}
	})
}
