package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/apipb"
)

func TestDescriptors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "echo.protoset")
	code, stdout, stderr := runCLI(t.Context(), "descriptors", "-o", file)
	if code != exitOK || stdout != "" || stderr != "" {
		t.Fatalf("exit status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	set := new(descriptorpb.FileDescriptorSet)
	if err := proto.Unmarshal(b, set); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatalf("the set does not stand alone: %v", err)
	}
	d, err := files.FindDescriptorByName("echo.v1.Echo")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	ms := d.(protoreflect.ServiceDescriptor).Methods()
	for i := range ms.Len() {
		m := ms.Get(i)
		got = append(got, fmt.Sprintf("%s(%s) %s client-streams=%v server-streams=%v", m.Name(), m.Input().FullName(), m.Output().FullName(), m.IsStreamingClient(), m.IsStreamingServer()))
	}
	want := []string{
		"Get(echo.v1.EchoRequest) echo.v1.EchoResponse client-streams=false server-streams=false",
		"Expand(echo.v1.EchoRequest) echo.v1.EchoResponse client-streams=false server-streams=true",
		"Collect(echo.v1.EchoRequest) echo.v1.EchoResponse client-streams=true server-streams=false",
		"Update(echo.v1.EchoRequest) echo.v1.EchoResponse client-streams=true server-streams=true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("methods:\n%q\nwant:\n%q", got, want)
	}

	code, stdout, _ = runCLI(t.Context(), "descriptors", "-o", "-")
	if code != exitOK || stdout != string(b) {
		t.Errorf("-o - wrote %d bytes (exit status %d), want the file's %d", len(stdout), code, len(b))
	}
}

func TestDescriptorsErrors(t *testing.T) {
	code, _, stderr := runCLI(t.Context(), "descriptors")
	if code != exitUsage || !strings.HasPrefix(stderr, "localgrpc: -o is required: the file to write, or - for standard output\n") {
		t.Errorf("without -o: exit status %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t.Context(), "descriptors", "echo.protoset")
	if code != exitUsage || !strings.HasPrefix(stderr, "localgrpc: descriptors takes only flags, no arguments; got \"echo.protoset\"\n") {
		t.Errorf("with an argument: exit status %d, stderr:\n%s", code, stderr)
	}
	dir := filepath.Join(t.TempDir(), "nosuch", "echo.protoset")
	code, _, stderr = runCLI(t.Context(), "descriptors", "-o", dir)
	// What follows the path is the system's reason.
	if code != exitFailure || !strings.HasPrefix(stderr, "localgrpc: -o: open "+dir+": ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("into a missing directory: exit status %d, stderr:\n%s", code, stderr)
	}
}

// TestWithImports puts each file after the files it imports, once.
func TestWithImports(t *testing.T) {
	// api.proto imports source_context.proto and type.proto; type.proto
	// imports any.proto and source_context.proto again.
	set := withImports(apipb.File_google_protobuf_api_proto, apipb.File_google_protobuf_api_proto)
	var got []string
	for _, f := range set.File {
		got = append(got, f.GetName())
	}
	want := []string{"google/protobuf/source_context.proto", "google/protobuf/any.proto", "google/protobuf/type.proto", "google/protobuf/api.proto"}
	if !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
	if _, err := protodesc.NewFiles(set); err != nil {
		t.Errorf("the set does not stand alone: %v", err)
	}
}
