package localgrpc_test

// attack5: addresses that NewClient accepts without credentials must be
// dialed on this machine whatever DNS says, as the doc promises for
// localhost ("never resolved") and for IP literals. These spellings are
// accepted without credentials; in a namespace where DNS answers every
// name with 127.0.0.9 (a second server) and the hosts file has no
// localhost, every call must reach the server on 127.0.0.1 / ::1.

import (
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

func TestAttack5AcceptedSpellingsDialLocally(t *testing.T) {
	if os.Getenv(localDialChildEnv) == "" {
		runInOwnNamespaces(t, "TestAttack5AcceptedSpellingsDialLocally")
		return
	}
	setUpLocalDialNamespace(t)
	dns := serveDNS(t, net.IPv4(127, 0, 0, 9))

	var right, wrong atomic.Int64
	l := listenTCP(t, "127.0.0.1:0")
	p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	serveListeners(t, &right, l)
	serveListeners(t, &wrong, listenTCP(t, net.JoinHostPort("127.0.0.9", p)))
	addrs := []string{
		"[localhost]:" + p,
		"[LOCALHOST]:" + p,
		"passthrough:///[localhost]:" + p,
		"passthrough://evil.example/localhost:" + p,
		"dns:///%6cocalhost:" + p,
		"dns:///%4cOCALHOST:" + p,
		"dns://evil.example/localhost:" + p,
		"dns:///localhost:" + p + "?x=1",
		"dns:///localhost:" + p + "#f",
		"[127.0.0.1]:" + p,
		"[::ffff:7f00:1]:" + p,
		"[::ffff:0:0]:" + p,
		"passthrough:///0.0.0.0:" + p,
		"localhost:0" + p,
	}
	if l6, err := net.Listen("tcp6", net.JoinHostPort("::1", p)); err == nil {
		serveListeners(t, &right, l6)
		addrs = append(addrs, "[::1%lo]:"+p, "[::1%25lo]:"+p, "[0:0:0:0:0:0:0:1]:"+p, "dns:///[::1%25lo]:"+p, "passthrough:///[::]:"+p)
	}
	for _, addr := range addrs {
		t.Run(addr, func(t *testing.T) {
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Skipf("refused without credentials: %v", err)
			}
			defer cc.Close()
			beforeR, beforeW := right.Load(), wrong.Load()
			_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "secret"})
			switch {
			case wrong.Load() != beforeW:
				t.Errorf("accepted without credentials (this machine), but the call reached the server DNS named (127.0.0.9): sent plaintext where DNS decides")
			case err != nil:
				t.Logf("call failed: %v (reached neither server)", err)
			case right.Load() != beforeR+1:
				t.Errorf("the call did not reach the server on loopback")
			}
		})
	}
	t.Logf("DNS was asked %q", dns.seen())
}
