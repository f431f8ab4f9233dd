package localgrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/local"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

const peerChildEnv = "LOCALGRPC_PEER_CHILD_ADDRS"

// TestPeerCredsChildClient is the client run as another user by
// runAsNobody; it does nothing otherwise.
func TestPeerCredsChildClient(t *testing.T) {
	addrs := os.Getenv(peerChildEnv)
	if addrs == "" {
		t.Skip("only as a child")
	}
	for _, addr := range strings.Split(addrs, "\n") {
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			fmt.Printf("RESULT %s newclient %v\n", addr, err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c := echov1.NewEchoClient(cc)
		_, err = c.Get(ctx, &echov1.EchoRequest{Text: "x"})
		fmt.Printf("RESULT %s get %s\n", addr, status.Code(err))
		// The generated Expand returns Send's io.EOF, without the status,
		// when the server ended the call before it sent: the stream's own
		// Recv has the status.
		s, err := cc.NewStream(ctx, &echov1.Echo_ServiceDesc.Streams[0], "/echo.v1.Echo/Expand")
		if err == nil {
			if err = s.SendMsg(&echov1.EchoRequest{Text: "x y"}); err == nil || err == io.EOF {
				s.CloseSend()
				err = s.RecvMsg(&echov1.EchoResponse{})
			}
		}
		fmt.Printf("RESULT %s expand %s\n", addr, status.Code(err))
		_, err = healthgrpc.NewHealthClient(cc).Check(ctx, &healthgrpc.HealthCheckRequest{})
		fmt.Printf("RESULT %s health %s\n", addr, status.Code(err))
		r, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx)
		if err == nil {
			r.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
			_, err = r.Recv() // Send's io.EOF hides the status; Recv has it
		}
		fmt.Printf("RESULT %s reflection %s %q\n", addr, status.Code(err), fmt.Sprint(err))
		cancel()
		cc.Close()
	}
}

// runAsNobody runs TestPeerCredsChildClient as uid/gid nobody against addrs
// and returns "addr method" -> code.
func runAsNobody(t *testing.T, top string, addrs []string) map[string]string {
	t.Helper()
	bin := filepath.Join(top, "child")
	copyExecutable(t, bin)
	cmd := exec.Command(bin, "-test.run=^TestPeerCredsChildClient$", "-test.count=1")
	cmd.Dir = top
	cmd.Env = append(os.Environ(), peerChildEnv+"="+strings.Join(addrs, "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out.String(), errb.String())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && f[0] == "RESULT" {
			got[f[1]+" "+f[2]] = strings.Join(f[3:], " ")
		}
	}
	return got
}

// openDir is a fresh directory in t.TempDir that another user can enter.
func openDir(t *testing.T) string {
	d := t.TempDir()
	for p := d; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	return d
}

// wrappedListener wraps a unix listener as middleware does (a
// connection-limiting or logging listener): its connections embed net.Conn.
type wrappedListener struct{ net.Listener }

type wrappedConn struct{ net.Conn }

func (l wrappedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrappedConn{c}, nil
}

// TestPeerCredsOtherUser: a server with WithPeerCredentials() (its
// own user only), its socket files open to all (mode 0666), must deny a
// real process of another user on every socket it serves — its own unix
// socket, an abstract one, a unix listener given to AddListener, an abstract
// one, a wrapped one, shm: on a socket file and an abstract one — for unary, streaming, health and reflection calls,
// with and without transport credentials.
func TestPeerCredsOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	for _, withCreds := range []bool{false, true} {
		t.Run(fmt.Sprintf("localcreds=%v", withCreds), func(t *testing.T) {
			top := openDir(t)
			opts := []localgrpc.ServerOption{localgrpc.WithPeerCredentials(), localgrpc.WithSocketMode(0o666),
				localgrpc.WithHealth(), localgrpc.WithReflection(), localgrpc.WithLogger(discardLogger)}
			if withCreds {
				opts = append(opts, localgrpc.WithTransportCredentials(local.NewCredentials()))
			}
			srv := newEchoServer(opts...)
			addrs := []string{"unix:" + filepath.Join(top, "own.sock"), "unix:@" + uniqueName(t)}
			if !withCreds { // shm: carries no transport credentials
				addrs = append(addrs, "shm:"+filepath.Join(top, "shm.sock"), "shm:@"+uniqueName(t))
			}
			if err := srv.Listen(addrs...); err != nil {
				t.Fatal(err)
			}
			for _, mk := range []func() (net.Listener, error){
				func() (net.Listener, error) { return net.Listen("unix", filepath.Join(top, "added.sock")) },
				func() (net.Listener, error) { return net.Listen("unix", "@"+uniqueName(t)) },
				func() (net.Listener, error) {
					l, err := net.Listen("unix", filepath.Join(top, "wrapped.sock"))
					return wrappedListener{l}, err
				},
			} {
				l, err := mk()
				if err != nil {
					t.Fatal(err)
				}
				if ul, ok := l.(*net.UnixListener); ok && !strings.HasPrefix(l.Addr().String(), "@") {
					os.Chmod(ul.Addr().String(), 0o666)
				}
				if w, ok := l.(wrappedListener); ok {
					os.Chmod(w.Addr().String(), 0o666)
				}
				if err := srv.AddListener(l); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- srv.Serve(context.Background()) }()
			t.Cleanup(func() { srv.Stop(); <-done })
			addrs = srv.Addrs()
			got := runAsNobody(t, top, addrs)
			for _, a := range addrs {
				for _, m := range []string{"get", "expand", "health", "reflection"} {
					if c := got[a+" "+m]; !strings.HasPrefix(c, codes.PermissionDenied.String()) {
						t.Errorf("uid %d calling %s %s: %q, want PermissionDenied", nobody, a, m, c)
					}
				}
			}
		})
	}
}

// TestAllowGIDs: AllowGIDs(nobody's gid) lets nobody in; AllowUIDs
// of some third user does not.
func TestAllowGIDs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	for _, tc := range []struct {
		rule localgrpc.PeerRule
		want codes.Code
	}{
		{localgrpc.AllowGIDs(nobody), codes.OK},
		{localgrpc.AllowUIDs(1234), codes.PermissionDenied},
		{localgrpc.AllowUIDs(), codes.PermissionDenied},
		{localgrpc.AllowGIDs(), codes.PermissionDenied},
	} {
		top := openDir(t)
		srv := newEchoServer(localgrpc.WithPeerCredentials(tc.rule), localgrpc.WithSocketMode(0o666), localgrpc.WithLogger(discardLogger), localgrpc.WithHealth(), localgrpc.WithReflection())
		serve(t, srv, "unix:"+filepath.Join(top, "s.sock"), "unix:@"+uniqueName(t))
		got := runAsNobody(t, top, srv.Addrs())
		for _, a := range srv.Addrs() {
			if c := got[a+" get"]; c != tc.want.String() {
				t.Errorf("rule %v: nobody calling %s: %s, want %s", tc.rule, a, c, tc.want)
			}
		}
	}
}

// TestGRPCUnaryInterceptorSeesNoDeniedCalls: the peer check is meant
// to be outermost ("no interceptor of the user's sees a denied call"), but
// grpc.UnaryInterceptor / grpc.StreamInterceptor given through
// WithGRPCServerOptions run before it: grpc-go puts opts.unaryInt ahead of
// every chained interceptor. Such an interceptor sees, and can answer,
// calls of a denied peer.
func TestGRPCUnaryInterceptorSeesNoDeniedCalls(t *testing.T) {
	var seen atomic.Int64
	icpt := grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		seen.Add(1)
		return h(ctx, req)
	})
	srv := newEchoServer(localgrpc.WithPeerCredentials(localgrpc.AllowUIDs(uint32(os.Getuid())+1)), localgrpc.WithLogger(discardLogger),
		localgrpc.WithGRPCServerOptions(icpt))
	serve(t, srv, "unix:"+socketPath(t))
	_, err := dial(t, srv.Addrs()[0]).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("call: %v, want PermissionDenied", err)
	}
	if seen.Load() != 0 {
		t.Errorf("a grpc.UnaryInterceptor given through WithGRPCServerOptions saw %d call(s) of a denied peer, before the peer check", seen.Load())
	}
}
