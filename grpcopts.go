package localgrpc

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/grpc"
)

// Options given through WithGRPCServerOptions configure the grpc.Server
// of sockets only. Those that change what a call may do would be skipped
// in silence for in-process calls, so Listen refuses an in-process address
// beside them; options that concern sockets alone (keepalive, buffers,
// HTTP/2 settings, compression, connection limits) are fine. grpc-go's
// options are opaque functions: which were given is read from the
// resulting grpc.Server's options, by reflection, against a server's
// defaults. The check fails closed: an option that sets a field not known
// to concern sockets alone (one of a later grpc-go, say) is refused too,
// and if the options cannot be read, every option given is.

// callOption is one kind of grpc-go server option that changes what a
// call may do, as the fields of grpc-go's serverOptions it sets.
type callOption struct {
	fields []string // any of them differing from the default says it was given
	name   string   // what the user wrote
	use    string   // what to use instead
}

var callOptions = []callOption{
	{[]string{"unaryInt", "chainUnaryInts"}, "grpc.UnaryInterceptor or grpc.ChainUnaryInterceptor", "WithServerUnaryInterceptor, which applies on every transport"},
	{[]string{"streamInt", "chainStreamInts"}, "grpc.StreamInterceptor or grpc.ChainStreamInterceptor", "WithServerStreamInterceptor, which applies on every transport"},
	{[]string{"statsHandlers"}, "grpc.StatsHandler", "WithServerStatsHandler, which applies on every transport"},
	{[]string{"maxReceiveMessageSize"}, "grpc.MaxRecvMsgSize", "WithServerMaxRecvMsgSize, which applies on every transport"},
	{[]string{"maxSendMessageSize"}, "grpc.MaxSendMsgSize", "WithServerMaxSendMsgSize, which applies on every transport"},
	{[]string{"inTapHandle"}, "grpc.InTapHandle", "a server interceptor (WithServerUnaryInterceptor, WithServerStreamInterceptor), which applies on every transport"},
	{[]string{"unknownStreamDesc"}, "grpc.UnknownServiceHandler", "registered services: in-process calls have no unknown-service handler"},
	{[]string{"codec"}, "grpc.ForceServerCodec or grpc.CustomCodec", "no server codec: in-process calls use the client's"},
	{[]string{"binaryLogger"}, "a binary logger (binarylog)", "a stats handler (WithServerStatsHandler), which applies on every transport"},
	{[]string{"streamWrapper"}, "a stream wrapper", "a stream interceptor (WithServerStreamInterceptor), which applies on every transport"},
	{[]string{"maxHeaderListSize"}, "grpc.MaxHeaderListSize", "a server interceptor that checks the incoming metadata's size: in-process metadata has no HTTP/2 header limit"},
}

// socketOnly are the fields of grpc-go's serverOptions that concern
// sockets alone. Any other field that an option changed is refused for
// in-process addresses, named by the table above or, for an option this
// code does not know (a later grpc-go's), by its field: the check fails
// closed.
var socketOnly = map[string]bool{
	"creds": true, "cp": true, "dc": true, "maxConcurrentStreams": true,
	"keepaliveParams": true, "keepalivePolicy": true, "initialWindowSize": true,
	"initialConnWindowSize": true, "writeBufferSize": true, "readBufferSize": true,
	"sharedWriteBuffer": true, "connectionTimeout": true,
	"headerTableSize": true, "numServerWorkers": true, "bufferPool": true,
	"waitForHandlers": true, "staticWindowSize": true,
}

// optionsNotInproc reports the call-changing options among opts, as an
// error that names each and what to use instead; nil if there are none.
func optionsNotInproc(opts []grpc.ServerOption) error {
	// Both start from sentinel sizes, so that a size limit given at
	// grpc-go's default value still shows: given last, it replaces the
	// Server's own limit on sockets.
	base := []grpc.ServerOption{grpc.MaxRecvMsgSize(sentinelSize), grpc.MaxSendMsgSize(sentinelSize)}
	plain := grpc.NewServer(base...)
	defer plain.Stop()
	defaults, okDefault := serverOptionsOf(plain)
	if okDefault {
		if err := globalsNotInproc(defaults); err != nil {
			return err
		}
	}
	if len(opts) == 0 {
		return nil
	}
	probe := grpc.NewServer(append(base, opts...)...)
	defer probe.Stop()
	given, ok := serverOptionsOf(probe)
	if !ok || !okDefault {
		return fmt.Errorf("options given through WithGRPCServerOptions apply to sockets only, and which were given cannot be read from this grpc-go version; give interceptors, stats handlers and size limits with the Server's own options, and grpc-go's through WithGRPCServerOptions only to a Server with no in-process address")
	}
	changed := map[string]bool{}
	for i := range given.NumField() {
		name := given.Type().Field(i).Name
		if socketOnly[name] {
			continue
		}
		d, err := differs(given.Field(i), defaults.Field(i))
		if err != nil || d {
			changed[name] = true
		}
	}
	var found []string
	for _, o := range callOptions {
		for _, f := range o.fields {
			if changed[f] {
				found = append(found, fmt.Sprintf("%s, which in-process calls would skip: use %s", o.name, o.use))
				for _, f := range o.fields {
					delete(changed, f)
				}
				break
			}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(changed)) {
		found = append(found, fmt.Sprintf("an option this version of localgrpc does not know (it sets grpc-go's %q), which in-process calls might skip: give it only to a Server with no in-process address", f))
	}
	if found == nil {
		return nil
	}
	return fmt.Errorf("options given through WithGRPCServerOptions apply to sockets only: %s", strings.Join(found, "; "))
}

// globalsNotInproc reports the call-changing options that grpc-go's global
// server options (registered through its internal package, as
// stats/opentelemetry/csm.EnableObservability does) give every
// grpc.Server, and so every socket, but not in-process calls: a server
// with no option of its own starts with none of them, its sizes at the
// sentinels.
func globalsNotInproc(plain reflect.Value) error {
	var found []string
	for _, o := range callOptions {
		for _, f := range o.fields {
			v := plain.FieldByName(f)
			unset := reflect.Zero(v.Type())
			if v.CanInt() {
				unset = reflect.ValueOf(sentinelSize).Convert(v.Type())
			}
			set, err := differs(v, unset)
			set = set || err != nil // a kind not known: fail closed
			if set {
				found = append(found, fmt.Sprintf("%s, which in-process calls would skip", o.name))
				break
			}
		}
	}
	if found == nil {
		return nil
	}
	return fmt.Errorf("grpc-go's global server options (such as stats/opentelemetry/csm.EnableObservability's) apply to sockets only and set %s; give the same controls with the Server's own options, which apply on every transport, or serve no in-process address", strings.Join(found, "; "))
}

// sentinelSize is a message size limit no one sets: see optionsNotInproc.
const sentinelSize = 1<<30 + 12345

// serverOptionsOf is the options struct of s.
func serverOptionsOf(s *grpc.Server) (reflect.Value, bool) {
	v := reflect.ValueOf(s).Elem().FieldByName("opts")
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for _, o := range callOptions {
		for _, f := range o.fields {
			if !v.FieldByName(f).IsValid() {
				return reflect.Value{}, false
			}
		}
	}
	return v, true
}

// differs reports whether an option's field differs from its default; an
// error for a kind it cannot compare, which counts as differing.
func differs(v, def reflect.Value) (bool, error) {
	switch v.Kind() {
	case reflect.Func, reflect.Map, reflect.Chan:
		return v.IsNil() != def.IsNil() || v.Pointer() != def.Pointer(), nil
	case reflect.Pointer, reflect.UnsafePointer:
		return v.Pointer() != def.Pointer(), nil
	case reflect.Interface:
		if v.IsNil() || def.IsNil() {
			return v.IsNil() != def.IsNil(), nil
		}
		return differs(v.Elem(), def.Elem())
	case reflect.Slice:
		// Element by element: grpc-go's global options give every server
		// equal elements in arrays of its own.
		if v.Len() != def.Len() {
			return true, nil
		}
		for i := range v.Len() {
			if d, err := differs(v.Index(i), def.Index(i)); err != nil || d {
				return true, err
			}
		}
		return false, nil
	case reflect.Bool:
		return v.Bool() != def.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != def.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != def.Uint(), nil
	case reflect.Float32, reflect.Float64:
		return v.Float() != def.Float(), nil
	case reflect.String:
		return v.String() != def.String(), nil
	case reflect.Struct:
		if v.Type() != def.Type() {
			return true, nil
		}
		for i := range v.NumField() {
			if d, err := differs(v.Field(i), def.Field(i)); err != nil || d {
				return true, err
			}
		}
		return false, nil
	}
	return true, fmt.Errorf("a field of kind %s", v.Kind())
}
