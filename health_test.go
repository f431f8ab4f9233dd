package localgrpc_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestHealthByService checks on every transport that each service
// reflection lists reports SERVING, as connect-go's stack does (and as
// grpc_health_probe -service expects), and an unknown one NotFound.
func TestHealthByService(t *testing.T) {
	srv := newEchoServer(localgrpc.WithHealth(), localgrpc.WithReflection())
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+socketPath(t), "unix:@"+uniqueName(t), "shm:@"+uniqueName(t), "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		cc := dialConn(t, addr)
		health, err := echotest.HealthOfEveryService(timeoutCtx(t), cc)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(health)) {
			if health[name] != "SERVING" {
				t.Errorf("%s: service %q is %s, want SERVING", addr, name, health[name])
			}
		}
		if !slices.Contains(slices.Collect(maps.Keys(health)), "echo.v1.Echo") {
			t.Errorf("%s: reflection does not list echo.v1.Echo: %v", addr, health)
		}
		_, err = healthgrpc.NewHealthClient(cc).Check(timeoutCtx(t), &healthgrpc.HealthCheckRequest{Service: "nosuch.Service"})
		if status.Code(err) != codes.NotFound {
			t.Errorf("%s: health of an unknown service: %v, want NotFound", addr, err)
		}
	}
}

// TestSetServingStatus checks that a status a user sets is what checks
// and watchers see on every transport, and that without WithHealth it is
// an error.
func TestSetServingStatus(t *testing.T) {
	srv := newEchoServer(localgrpc.WithHealth())
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+socketPath(t), "unix:@"+uniqueName(t), "shm:@"+uniqueName(t), "127.0.0.1:0")
	var watches []healthgrpc.Health_WatchClient
	for _, addr := range srv.Addrs() {
		w, err := healthgrpc.NewHealthClient(dialConn(t, addr)).Watch(timeoutCtx(t), &healthgrpc.HealthCheckRequest{Service: "echo.v1.Echo"})
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, addr+" watch", w, healthgrpc.HealthCheckResponse_SERVING)
		watches = append(watches, w)
	}
	for _, st := range []healthgrpc.HealthCheckResponse_ServingStatus{healthgrpc.HealthCheckResponse_NOT_SERVING, healthgrpc.HealthCheckResponse_SERVING} {
		if err := srv.SetServingStatus("echo.v1.Echo", st); err != nil {
			t.Fatal(err)
		}
		for i, addr := range srv.Addrs() {
			wantStatus(t, addr+" watch", watches[i], st)
			r, err := healthgrpc.NewHealthClient(dialConn(t, addr)).Check(timeoutCtx(t), &healthgrpc.HealthCheckRequest{Service: "echo.v1.Echo"})
			if err != nil || r.GetStatus() != st {
				t.Errorf("%s: Check = %v, %v; want %v", addr, r, err, st)
			}
		}
	}
	err := newEchoServer().SetServingStatus("echo.v1.Echo", healthgrpc.HealthCheckResponse_SERVING)
	if err == nil || !strings.Contains(err.Error(), "WithHealth") {
		t.Errorf("SetServingStatus without WithHealth: %v, want an error naming WithHealth", err)
	}
}

// TestHealthWhileDraining checks on every transport that a watcher of a
// service hears NOT_SERVING once GracefulStop begins, while a call still
// holds the drain open.
func TestHealthWhileDraining(t *testing.T) {
	for _, tr := range transports {
		t.Run("transport="+tr.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := localgrpc.NewServer(localgrpc.WithHealth())
			echov1.RegisterEchoServer(srv, holdingEcho{release: release})
			serve(t, srv, tr.addr(t))
			cc := dialConn(t, srv.Addrs()[0])
			ctx := timeoutCtx(t)
			holdStream(t, ctx, echov1.NewEchoClient(cc))
			// The watch is a call in flight too: it ends before the drain can.
			watchCtx, endWatch := context.WithCancel(ctx)
			defer endWatch()
			w, err := healthgrpc.NewHealthClient(cc).Watch(watchCtx, &healthgrpc.HealthCheckRequest{Service: "echo.v1.Echo"})
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, "watch", w, healthgrpc.HealthCheckResponse_SERVING)
			graceful := make(chan struct{})
			go func() {
				defer close(graceful)
				srv.GracefulStop()
			}()
			wantStatus(t, "watch while draining", w, healthgrpc.HealthCheckResponse_NOT_SERVING)
			if err := srv.SetServingStatus("echo.v1.Echo", healthgrpc.HealthCheckResponse_SERVING); err != nil {
				t.Error(err)
			}
			endWatch()
			close(release)
			within(t, "GracefulStop", func() { <-graceful })
		})
	}
}

func wantStatus(t *testing.T, what string, w healthgrpc.Health_WatchClient, want healthgrpc.HealthCheckResponse_ServingStatus) {
	t.Helper()
	r, err := w.Recv()
	if err != nil || r.GetStatus() != want {
		t.Fatalf("%s: %v, %v; want %v", what, r, err, want)
	}
}

func dialConn(t *testing.T, addr string) localgrpc.ClientConn {
	t.Helper()
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}
