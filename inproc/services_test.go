package inproc_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

type listServer struct {
	listv1.UnimplementedListStringsServer
}

// registerAll registers the same services on r: Echo, ListStrings, health
// and reflection (which lists what r has).
func registerAll(r interface {
	grpc.ServiceRegistrar
	reflection.ServiceInfoProvider
}) *health.Server {
	echov1.RegisterEchoServer(r, echo.Server{})
	listv1.RegisterListStringsServer(r, listServer{})
	hs := health.NewServer()
	healthgrpc.RegisterHealthServer(r, hs)
	reflection.Register(r)
	return hs
}

// TestGetServiceInfo checks that a Channel lists its services as a
// grpc.Server with the same registrations does. grpc.Server lists a
// service's methods in map order, so both lists are sorted by name.
func TestGetServiceInfo(t *testing.T) {
	srv := grpc.NewServer()
	registerAll(srv)
	want := sortedMethods(srv.GetServiceInfo())
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		registerAll(ch)
		if got := sortedMethods(ch.GetServiceInfo()); !reflect.DeepEqual(got, want) {
			t.Errorf("GetServiceInfo() = %+v, want grpc.Server's %+v", got, want)
		}
	})
}

func sortedMethods(info map[string]grpc.ServiceInfo) map[string]grpc.ServiceInfo {
	for name, si := range info {
		si.Methods = slices.Clone(si.Methods)
		slices.SortFunc(si.Methods, func(a, b grpc.MethodInfo) int { return strings.Compare(a.Name, b.Name) })
		info[name] = si
	}
	return info
}

// TestReflection registers grpc-go's reflection service on a Channel and
// lists the services and fetches a file descriptor through it.
func TestReflection(t *testing.T) {
	wantServices := []string{
		"echo.v1.Echo",
		"grpc.health.v1.Health",
		"grpc.reflection.v1.ServerReflection",
		"grpc.reflection.v1alpha.ServerReflection",
		"list.v1.ListStrings",
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		registerAll(ch)
		s, err := reflectionpb.NewServerReflectionClient(ch).ServerReflectionInfo(timeoutCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		// List the services.
		if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		r, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, svc := range r.GetListServicesResponse().GetService() {
			names = append(names, svc.GetName())
		}
		slices.Sort(names)
		if !slices.Equal(names, wantServices) {
			t.Errorf("reflection lists %q, want %q", names, wantServices)
		}
		// The file that defines Echo.
		if err := s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "echo.v1.Echo"}}); err != nil {
			t.Fatal(err)
		}
		r, err = s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		files := r.GetFileDescriptorResponse().GetFileDescriptorProto()
		if len(files) == 0 {
			t.Fatalf("no file for echo.v1.Echo; response: %v", r)
		}
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(files[0], &fd); err != nil {
			t.Fatal(err)
		}
		if want := echov1.File_echo_v1_echo_proto.Path(); fd.GetName() != want {
			t.Errorf("file containing echo.v1.Echo is %q, want %q", fd.GetName(), want)
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := recvAllAny(s.Recv); err != nil {
			t.Errorf("stream ended with %v", err)
		}
	})
}

// recvAllAny reads a stream to its end and returns the error that ended
// it, nil for io.EOF.
func recvAllAny[T any](recv func() (T, error)) (int, error) {
	n := 0
	for {
		_, err := recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

// TestHealth registers grpc-go's health service on a Channel and checks
// Check and Watch through it.
func TestHealth(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		hs := registerAll(ch)
		client := healthgrpc.NewHealthClient(ch)

		r, err := client.Check(timeoutCtx(t), &healthgrpc.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if r.GetStatus() != healthgrpc.HealthCheckResponse_SERVING {
			t.Errorf("Check() = %v, want SERVING", r.GetStatus())
		}
		hs.SetServingStatus("echo.v1.Echo", healthgrpc.HealthCheckResponse_NOT_SERVING)
		r, err = client.Check(timeoutCtx(t), &healthgrpc.HealthCheckRequest{Service: "echo.v1.Echo"})
		if err != nil || r.GetStatus() != healthgrpc.HealthCheckResponse_NOT_SERVING {
			t.Errorf("Check(echo.v1.Echo) = %v, %v; want NOT_SERVING", r.GetStatus(), err)
		}

		// Watch: the handler sends the current status, then waits on a
		// channel of its own for changes.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		w, err := client.Watch(ctx, &healthgrpc.HealthCheckRequest{Service: "echo.v1.Echo"})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []healthgrpc.HealthCheckResponse_ServingStatus{
			healthgrpc.HealthCheckResponse_NOT_SERVING,
			healthgrpc.HealthCheckResponse_SERVING,
		} {
			r, err := w.Recv()
			if err != nil {
				t.Fatalf("Watch: Recv: %v, want %v", err, want)
			}
			if r.GetStatus() != want {
				t.Errorf("Watch: %v, want %v", r.GetStatus(), want)
			}
			hs.SetServingStatus("echo.v1.Echo", healthgrpc.HealthCheckResponse_SERVING)
		}
	})
}

// TestUnaryCallsFindTheirMethod checks that each unary call of one client
// reaches the method it names, whatever the client called before: the
// same name built anew, a name of the same length it does not have,
// another service's method, and a service registered after its calls.
func TestUnaryCallsFindTheirMethod(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		echov1.RegisterEchoServer(ch, echo.Server{})
		ctx := timeoutCtx(t)
		get := func(name string) error {
			var resp echov1.EchoResponse
			if err := ch.Invoke(ctx, name, &echov1.EchoRequest{Text: "hi"}, &resp); err != nil {
				return err
			}
			if resp.GetText() != "hi" {
				t.Errorf("%s answered %v", name, &resp)
			}
			return nil
		}
		checkHealth := func(want codes.Code) {
			_, err := healthgrpc.NewHealthClient(ch).Check(ctx, &healthgrpc.HealthCheckRequest{})
			wantCode(t, "Check", err, want)
		}
		for round := range 2 {
			wantCode(t, "Get", get(echov1.Echo_Get_FullMethodName), codes.OK)
			wantCode(t, "Get built anew", get(strings.Clone(echov1.Echo_Get_FullMethodName)), codes.OK)
			wantCode(t, "Got", get("/echo.v1.Echo/Got"), codes.Unimplemented)
			wantCode(t, "Get after Got", get(echov1.Echo_Get_FullMethodName), codes.OK)
			if round == 0 {
				checkHealth(codes.Unimplemented)
				healthgrpc.RegisterHealthServer(ch, health.NewServer())
			}
			checkHealth(codes.OK)
		}
	})
}
