package main

import (
	"crypto/rand"
	"maps"
	"testing"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/internal/echotest"
)

// TestServeHealthSameOnBothStacks checks that `localgrpc serve` answers
// health checks of every service it lists alike on grpc-go and
// connect-go, as grpc_health_probe -service would ask: SERVING.
func TestServeHealthSameOnBothStacks(t *testing.T) {
	byStack := map[string]map[string]string{}
	for _, stack := range []string{stackGRPC, stackConnect} {
		addrs, _, _ := startServe(t, 1, "--stack", stack, "unix:@localgrpc-test-"+rand.Text())
		cc, err := localgrpc.NewClient(addrs[0])
		if err != nil {
			t.Fatal(err)
		}
		health, err := echotest.HealthOfEveryService(t.Context(), cc)
		cc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for name, st := range health {
			if st != "SERVING" {
				t.Errorf("%s: service %q is %s, want SERVING", stack, name, st)
			}
		}
		byStack[stack] = health
	}
	if !maps.Equal(byStack[stackGRPC], byStack[stackConnect]) {
		t.Errorf("health by service differs: grpc-go %v, connect-go %v", byStack[stackGRPC], byStack[stackConnect])
	}
}
