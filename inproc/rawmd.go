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

// rawMD locates that MD once: the type of the value the outgoing key holds
// and the index of its MD field. ok is false if the shape is not the one
// expected; then validateRawKeys passes every call and the copy's lowered
// keys are used.
var rawMD = func() (r struct {
	typ   reflect.Type
	field int
	ok    bool
}) {
	if outgoingMDKey == nil {
		return r
	}
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.MD{"k": {"v"}})
	t := reflect.TypeOf(ctx.Value(outgoingMDKey))
	if t == nil || t.Kind() != reflect.Struct {
		return r
	}
	f, found := t.FieldByName("md")
	if !found || f.Type != reflect.TypeFor[metadata.MD]() {
		return r
	}
	r.typ, r.field, r.ok = t, f.Index[0], true
	return r
}()

// validateRawKeys reports an upper-case key in the MD of
// metadata.NewOutgoingContext. Keys added by AppendToOutgoingContext are
// lowered when added, so only that MD can hold one. The MD sits in a field of
// an unexported struct; reflect reads it without touching grpc-go.
func validateRawKeys(ctx context.Context) error {
	if !rawMD.ok {
		return nil
	}
	v := reflect.ValueOf(ctx.Value(outgoingMDKey))
	if v.Type() != rawMD.typ {
		return nil
	}
	for it := v.Field(rawMD.field).MapRange(); it.Next(); {
		k := it.Key().String()
		for i := 0; i < len(k); i++ {
			if c := k[i]; 'A' <= c && c <= 'Z' {
				return status.Errorf(codes.Internal, "header key %q contains illegal characters not in [0-9a-z-_.]", k)
			}
		}
	}
	return nil
}
