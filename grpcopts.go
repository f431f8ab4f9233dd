package localgrpc

import (
	"fmt"
	"reflect"
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
// defaults. If their shape is not the one known here, every option given
// is refused for in-process addresses: the check fails closed.

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
}

// optionsNotInproc reports the call-changing options among opts, as an
// error that names each and what to use instead; nil if there are none.
func optionsNotInproc(opts []grpc.ServerOption) error {
	if len(opts) == 0 {
		return nil
	}
	probe, plain := grpc.NewServer(opts...), grpc.NewServer()
	defer probe.Stop()
	defer plain.Stop()
	given, ok := serverOptionsOf(probe)
	defaults, okDefault := serverOptionsOf(plain)
	if !ok || !okDefault {
		return fmt.Errorf("options given through WithGRPCServerOptions apply to sockets only, and which were given cannot be read from this grpc-go version; give interceptors, stats handlers and size limits with the Server's own options, and grpc-go's through WithGRPCServerOptions only to a Server with no in-process address")
	}
	var found []string
	for _, o := range callOptions {
		for _, f := range o.fields {
			d, err := differs(given.FieldByName(f), defaults.FieldByName(f))
			if err != nil {
				return fmt.Errorf("options given through WithGRPCServerOptions apply to sockets only, and whether %s was given cannot be read from this grpc-go version (%v); give grpc-go's options only to a Server with no in-process address", o.name, err)
			}
			if d {
				found = append(found, fmt.Sprintf("%s, which in-process calls would skip: use %s", o.name, o.use))
				break
			}
		}
	}
	if found == nil {
		return nil
	}
	return fmt.Errorf("options given through WithGRPCServerOptions apply to sockets only: %s", strings.Join(found, "; "))
}

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

// differs reports whether a field of the options differs from its
// default, for the kinds the call-changing options have.
func differs(v, def reflect.Value) (bool, error) {
	switch v.Kind() {
	case reflect.Func, reflect.Interface, reflect.Pointer:
		return !v.IsNil(), nil
	case reflect.Slice:
		return v.Len() > 0, nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return v.Int() != def.Int(), nil
	}
	return false, fmt.Errorf("a field of kind %s", v.Kind())
}
