package inproc

import (
	"context"
	"reflect"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// metadata.FromOutgoingContext lowers the keys of an MD that was built as a
// map literal, but grpc-go's transport reads the MD as it was set and fails
// the call on an upper-case key. To fail the same call the same way,
// validateRawKeys looks at the keys as they were set.
var outgoingMDKey = probeKey(func(ctx context.Context) { metadata.FromOutgoingContext(ctx) })

// validateRawKeys reports an upper-case key in the MD of
// metadata.NewOutgoingContext. Keys added by AppendToOutgoingContext are
// lowered when added, so only that MD can hold one. The MD sits in a field of
// an unexported struct; reflect reads it without touching grpc-go. If its
// shape ever changes, the check passes and the copy's lowered keys are used.
func validateRawKeys(ctx context.Context) error {
	if outgoingMDKey == nil {
		return nil
	}
	v := reflect.ValueOf(ctx.Value(outgoingMDKey))
	if v.Kind() != reflect.Struct {
		return nil
	}
	md := v.FieldByName("md")
	if md.Kind() != reflect.Map || md.Type() != reflect.TypeFor[metadata.MD]() {
		return nil
	}
	for it := md.MapRange(); it.Next(); {
		k := it.Key().String()
		for i := 0; i < len(k); i++ {
			if c := k[i]; 'A' <= c && c <= 'Z' {
				return status.Errorf(codes.Internal, "header key %q contains illegal characters not in [0-9a-z-_.]", k)
			}
		}
	}
	return nil
}
