package main

import (
	"errors"
	"fmt"
	"os"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func newDescriptorsCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "descriptors -o FILE",
		Short: "Write the Echo API's descriptors, with their imports, as a protoset",
		Long: `Descriptors writes the Echo API's file descriptors and every file they import,
imports first, as one FileDescriptorSet in the protobuf binary format: what
protoc --include_imports --descriptor_set_out writes, and what proxies, grpcurl
(-protoset) and ghz (--protoset) read to decode its messages without the .proto
source. -o - writes it to standard output.

grpcurl reaches a socket by the address serve prints, unix:@NAME or unix:PATH,
given as it is, without grpcurl's -unix flag: -unix turns @NAME into
unix://@NAME, which grpc-go refuses. For an abstract socket add -authority
localhost: grpcurl would send unix:@NAME as the HTTP/2 authority, which Go's
HTTP server (serve --stack connect) refuses.`,
		Example: `  localgrpc descriptors -o echo.protoset
  grpcurl -plaintext -authority localhost -protoset echo.protoset -d '{"text":"hi"}' unix:@echo echo.v1.Echo/Get`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return errors.New("-o is required: the file to write, or - for standard output")
			}
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(withImports(echov1.File_echo_v1_echo_proto))
			if err != nil {
				return failure{err}
			}
			if output == "-" {
				_, err = cmd.OutOrStdout().Write(b)
			} else {
				err = os.WriteFile(output, b, 0o644)
			}
			if err != nil {
				return failure{fmt.Errorf("-o: %w", err)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the descriptors to `file` (- for standard output)")
	return cmd
}

// withImports is the set of files, each after every file it imports.
func withImports(files ...protoreflect.FileDescriptor) *descriptorpb.FileDescriptorSet {
	set := new(descriptorpb.FileDescriptorSet)
	seen := make(map[string]bool)
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imports := f.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	for _, f := range files {
		add(f)
	}
	return set
}
