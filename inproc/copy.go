package inproc

import (
	"reflect"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto" // registers the "proto" codec
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// fastCloner is what vtprotobuf generates: a clone without reflection.
type fastCloner interface {
	CloneMessageVT() gproto.Message
}

// copyMessage makes dst, a message the receiver allocated, hold the message
// src that the sender passed, as mode says. codec, when not nil, is the
// call's forced codec, used for messages that are not protobuf.
func copyMessage(dst, src any, mode CopyMode, codec encoding.CodecV2) error {
	if mode == Share && shallowCopy(dst, src) {
		return nil
	}
	return cloneMessage(dst, src, codec)
}

// cloneMessage is copyMessage's deep copy. It is apart so that the common
// shallow copy runs in a small stack frame: a handler's goroutine starts
// with a small stack, and growing it costs more than a call.
func cloneMessage(dst, src any, codec encoding.CodecV2) error {
	dm, sm := protoMessage(dst), protoMessage(src)
	if dm != nil && sm != nil && codec == nil {
		if reflect.TypeOf(dm) == reflect.TypeOf(sm) {
			if fc, ok := sm.(fastCloner); ok && shallowCopy(dm, fc.CloneMessageVT()) {
				return nil
			}
			gproto.Reset(dm)
			gproto.Merge(dm, sm)
			return nil
		}
		// Different Go types for one message (a dynamicpb message on one
		// side, say): go through the wire format, as a network would.
		b, err := gproto.Marshal(sm)
		if err != nil {
			return status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
		}
		if err := gproto.Unmarshal(b, dm); err != nil {
			return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
		}
		return nil
	}
	if codec == nil {
		codec = encoding.GetCodecV2(proto.Name)
	}
	data, err := codec.Marshal(src)
	if err != nil {
		return status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
	}
	defer data.Free()
	if err := codec.Unmarshal(mem.BufferSlice(data), dst); err != nil {
		return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return nil
}

// shallowCopy sets *dst to *src when both are pointers to the same struct
// type, so the receiver owns the top-level message and shares what its
// fields point to. It reports whether it could.
func shallowCopy(dst, src any) bool {
	if reflect.TypeOf(dst) != reflect.TypeOf(src) {
		return false
	}
	dv := reflect.ValueOf(dst)
	if dv.Kind() != reflect.Pointer || dv.IsNil() {
		return false
	}
	sv := reflect.ValueOf(src)
	if sv.IsNil() {
		return false
	}
	dv.Elem().Set(sv.Elem())
	return true
}

// protoMessage returns m as a protobuf message, or nil if it is not one.
func protoMessage(m any) gproto.Message {
	switch m := m.(type) {
	case gproto.Message:
		return m
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m)
	}
	return nil
}

// messageSize is the encoded size of m, for stats handlers and size limits.
func messageSize(m any, codec encoding.CodecV2) (int, error) {
	if pm := protoMessage(m); pm != nil && codec == nil {
		return gproto.Size(pm), nil
	}
	if codec == nil {
		codec = encoding.GetCodecV2(proto.Name)
	}
	data, err := codec.Marshal(m)
	if err != nil {
		return 0, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
	}
	defer data.Free()
	return data.Len(), nil
}
