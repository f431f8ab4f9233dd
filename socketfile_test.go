package localgrpc_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// TestLongSocketPaths serves on socket paths of every length from 95 to
// 107 bytes, the longest a unix socket takes, with a one-byte base name:
// the server's temporary names must never be what is too long.
func TestLongSocketPaths(t *testing.T) {
	base := t.TempDir()
	for n := 95; n <= 107; n++ {
		t.Run(fmt.Sprintf("len=%d", n), func(t *testing.T) {
			pad := n - len(base) - len("/d/s") + 1
			if pad < 1 {
				t.Skipf("the temporary directory %s is too long to build a %d-byte path in", base, n)
			}
			dir := filepath.Join(base, fmt.Sprintf("%d", n)+strings.Repeat("d", pad-len(fmt.Sprint(n))))
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := dir + "/s"
			if len(path) != n {
				t.Fatalf("built a %d-byte path, want %d", len(path), n)
			}
			srv := newEchoServer()
			serve(t, srv, "unix:"+path)
			if _, err := dial(t, "unix:"+path).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
				t.Fatal(err)
			}
			checkOnly(t, dir, "s")
		})
	}
}

// checkOnly checks that dir holds exactly the files named.
func checkOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want %q: temporary files were left behind", dir, got, names)
	}
}

// TestSocketErrorsNameThePath checks that a unix socket the server cannot
// create is reported by the path the user gave, never by a temporary
// name, and leaves nothing behind.
func TestSocketErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.sock")
	serve(t, newEchoServer(), "unix:"+live)
	for _, tc := range []struct{ name, path, want string }{
		{"no-directory", filepath.Join(dir, "missing", "s.sock"), "no such file or directory"},
		{"parent-not-a-directory", filepath.Join(notDir, "s.sock"), "not a directory"},
		{"live", live, "in use"},
		{"too-long", dir + "/" + strings.Repeat("x", 120), "at most 107"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newEchoServer().Listen("unix:" + tc.path)
			var ae *localgrpc.AddressError
			switch {
			case !errors.As(err, &ae):
				t.Fatalf("Listen: %v, want an *AddressError", err)
			case ae.Address != "unix:"+tc.path || !strings.Contains(err.Error(), tc.want):
				t.Errorf("Listen: %v, want an error naming unix:%s and saying %q", err, tc.path, tc.want)
			case strings.Contains(err.Error(), ".lgrpc"):
				t.Errorf("Listen: %v names a temporary file", err)
			}
		})
	}
	checkOnly(t, dir, "file", "live.sock")
}

// TestRacingServersOnStalePath starts servers at once on a path that
// holds a stale socket (or nothing), many times: exactly one may listen,
// and it is the one that answers on the path.
func TestRacingServersOnStalePath(t *testing.T) {
	const rounds, racers = 300, 4
	dir := t.TempDir()
	for round := range rounds {
		path := filepath.Join(dir, fmt.Sprintf("%d.sock", round))
		if round%4 != 0 {
			makeStaleSocket(t, path)
		}
		var srvs [racers]*localgrpc.Server
		var errs [racers]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range srvs {
			srvs[i] = newEchoServer()
			wg.Go(func() {
				<-start
				errs[i] = srvs[i].Listen("unix:" + path)
			})
		}
		close(start)
		wg.Wait()
		var winners []*localgrpc.Server
		for i, srv := range srvs {
			if errs[i] == nil {
				winners = append(winners, srv)
			} else if !strings.Contains(errs[i].Error(), "in use") {
				t.Errorf("round %d: a loser's error does not say the path is in use: %v", round, errs[i])
			}
		}
		if len(winners) != 1 {
			for _, srv := range srvs {
				srv.Stop()
			}
			t.Fatalf("round %d: %d of %d servers racing for one path listen, want exactly 1: %v", round, len(winners), racers, errs)
		}
		startServe(t, winners[0])
		if _, err := dial(t, "unix:"+path).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatalf("round %d: the server that listens does not answer on the path: %v", round, err)
		}
		winners[0].Stop()
	}
}

// makeStaleSocket leaves a socket file at path with no one listening, as
// a crashed server does.
func makeStaleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}
