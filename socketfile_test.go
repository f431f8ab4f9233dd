package localgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"golang.org/x/sys/unix"
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

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("lstat %s: %v", path, err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestDrainKeepsSuccessorsSocket: server A drains (GracefulStop
// with a stream open; its listener is already closed, so its socket is
// stale). Meanwhile its successor B, a plain net.Listen server as grpc-go
// users write (remove the stale file, bind), takes the path. When A's
// drain ends, A's Stop must not remove B's socket. A checks only
// os.SameFile (device and inode number), and on ext4 the inode number of
// A's freed socket is handed straight to B's new one.
func TestDrainKeepsSuccessorsSocket(t *testing.T) {
	for i := 0; i < 5; i++ {
		path := socketPath(t)
		release := make(chan struct{})
		a := localgrpc.NewServer()
		echov1.RegisterEchoServer(a, holdingEcho{release: release})
		if err := a.Listen("unix:" + path); err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- a.Serve(context.Background()) }()
		inoA := inodeOf(t, path)
		cc, err := localgrpc.NewClient("unix:" + path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := timeoutCtx(t)
		held := holdStream(t, ctx, echov1.NewEchoClient(cc))
		_ = held
		graceful := make(chan struct{})
		go func() { defer close(graceful); a.GracefulStop() }()
		// Wait until A no longer accepts: its socket is then stale.
		for {
			c, err := net.Dial("unix", path)
			if err != nil {
				break
			}
			c.Close()
			time.Sleep(5 * time.Millisecond)
		}
		// B, a successor, takes the path the ordinary way.
		os.Remove(path)
		b, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		inoB := inodeOf(t, path)
		close(release)
		within(t, "A's GracefulStop", func() { <-graceful })
		<-served
		cc.Close()
		_, statErr := os.Lstat(path)
		b.Close()
		if statErr != nil {
			t.Fatalf("iteration %d: after A's drain ended, B's live socket at %s is gone (%v); A's inode %d, B's %d", i, path, statErr, inoA, inoB)
		}
		t.Logf("iteration %d: inode A %d, B %d; B's socket survived", i, inoA, inoB)
	}
}

// TestLockedDirDoesNotBlockListen: Listen on a unix path flocks the
// path's directory and waits for the lock without bound. Any process that
// can open the directory for reading (any user, for /tmp or /run/user's
// parents) can take that flock and hold it: Listen then never returns, and
// Stop does not end it. net.Listen (and so grpc-go) never waits here.
func TestLockedDirDoesNotBlockListen(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("runs the lock holder as another user")
	}
	dir := openDir(t) // 0755: readable by everyone, writable by the server only
	// Another, unprivileged user takes an exclusive flock on the
	// directory: it needs only to open it for reading.
	holder := exec.Command("flock", "--close", "--exclusive", dir, "sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := holder.Start(); err != nil {
		t.Skipf("flock as nobody: %v", err)
	}
	kill := func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL) } // its group: flock and its sleep
	t.Cleanup(func() { kill(); holder.Wait() })
	// Wait until the holder has the lock.
	for {
		d, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			unix.Flock(int(d.Fd()), unix.LOCK_UN)
		}
		d.Close()
		if err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv := newEchoServer()
	done := make(chan error, 1)
	go func() { done <- srv.Listen("unix:" + filepath.Join(dir, "s.sock")) }()
	select {
	case err := <-done:
		t.Logf("Listen returned %v while another user held a flock on the directory", err)
		srv.Stop()
		return
	case <-time.After(3 * time.Second):
	}
	srv.Stop() // does not help
	select {
	case <-done:
		t.Log("Stop ended the Listen")
	case <-time.After(2 * time.Second):
		t.Errorf("Listen(unix:%s/s.sock) has not returned while uid %d holds a flock on the directory, even after Stop: any user who can read the directory blocks it for as long as they like (net.Listen would have bound at once)", dir, nobody)
	}
	kill()
	<-done
	srv.Stop()
}

// TestSocketPathSetups: what is at the path, or above it, must be
// refused (and left alone) unless it is a stale socket.
func TestSocketPathSetups(t *testing.T) {
	type setup func(t *testing.T, dir, path string) (keep string)
	cases := []struct {
		name string
		prep setup
		ok   bool
	}{
		{"nothing", func(t *testing.T, dir, path string) string { return "" }, true},
		{"directory", func(t *testing.T, dir, path string) string { os.Mkdir(path, 0o755); return path }, false},
		{"regular-file", func(t *testing.T, dir, path string) string { os.WriteFile(path, []byte("x"), 0o600); return path }, false},
		{"dangling-symlink", func(t *testing.T, dir, path string) string {
			os.Symlink(filepath.Join(dir, "nowhere"), path)
			return path
		}, false},
		{"symlink-to-stale-socket", func(t *testing.T, dir, path string) string {
			target := filepath.Join(dir, "stale.sock")
			l, _ := net.Listen("unix", target)
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
			os.Symlink(target, path)
			return target
		}, false},
		{"symlink-to-live-socket", func(t *testing.T, dir, path string) string {
			target := filepath.Join(dir, "live.sock")
			l, _ := net.Listen("unix", target)
			t.Cleanup(func() { l.Close() })
			os.Symlink(target, path)
			return target
		}, false},
		{"stale-socket", func(t *testing.T, dir, path string) string {
			l, _ := net.Listen("unix", path)
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
			return ""
		}, true},
		{"live-socket-other-server", func(t *testing.T, dir, path string) string {
			l, _ := net.Listen("unix", path)
			t.Cleanup(func() { l.Close() })
			return path
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.sock")
			keep := tc.prep(t, dir, path)
			var before os.FileInfo
			if keep != "" {
				before, _ = os.Lstat(keep)
			}
			srv := newEchoServer()
			err := srv.Listen("unix:" + path)
			if (err == nil) != tc.ok {
				t.Errorf("Listen: %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				var ae *localgrpc.AddressError
				if !errors.As(err, &ae) {
					t.Errorf("Listen error %T %v, want *AddressError", err, err)
				}
			}
			srv.Stop()
			if keep != "" {
				after, err := os.Lstat(keep)
				if err != nil || !os.SameFile(before, after) {
					t.Errorf("%s was changed or removed: %v", keep, err)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if len(e.Name()) > 6 && e.Name()[:7] == ".lgrpc-" {
					t.Errorf("private directory %s left behind", e.Name())
				}
			}
		})
	}
}

// TestLongestSocketPath: a path of exactly 107 bytes, the longest a
// unix socket address holds, is served and reachable through Addrs.
func TestLongestSocketPath(t *testing.T) {
	dir := t.TempDir()
	pad := 107 - len(dir) - 1
	if pad < 1 {
		t.Skip("temp dir too long")
	}
	name := make([]byte, pad)
	for i := range name {
		name[i] = 'x'
	}
	path := filepath.Join(dir, string(name))
	srv := newEchoServer()
	serve(t, srv, "unix:"+path)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	if _, err := dial(t, srv.Addrs()[0]).Get(ctx, &echov1.EchoRequest{Text: "x"}); err != nil {
		t.Errorf("a call to a %d-byte path: %v", len(path), err)
	}
	if err := newEchoServer().Listen("unix:" + path + "y"); err == nil {
		t.Errorf("a 108-byte path was accepted")
	}
}

// TestSocketModeValues: the socket file gets exactly the mode asked
// for, whatever the umask, including modes with special bits.
func TestSocketModeValues(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, mode := range []os.FileMode{0, 0o600, 0o660, 0o666, 0o777, 0o7777, os.ModeSetuid | 0o644} {
		path := socketPath(t)
		srv := localgrpc.NewServer(localgrpc.WithSocketMode(mode))
		if err := srv.Listen("unix:" + path); err != nil {
			t.Errorf("mode %v: %v", mode, err)
			continue
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != mode.Perm() || fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
			t.Errorf("WithSocketMode(%v): file mode %v, %v", mode, fi.Mode(), err)
		}
		srv.Stop()
	}
}

// TestSocketNameInProcNetUnix: the kernel knows the socket by the path the
// user gave, so that ss -xlp and /proc/net/unix show it, not a private
// name such as /proc/self/fd/8/s.
func TestSocketNameInProcNetUnix(t *testing.T) {
	if _, err := os.Stat("/proc/net/unix"); err != nil {
		t.Skipf("no /proc/net/unix: %v", err)
	}
	path := socketPath(t)
	srv := newEchoServer()
	if err := srv.Listen("unix:" + path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	table, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(table)) {
		fields := strings.Fields(line)
		if len(fields) == 8 && fields[7] == path {
			return
		}
	}
	t.Errorf("/proc/net/unix does not list %s:\n%s", path, table)
}

// TestAbstractNameLimit checks that an abstract socket name longer than
// Linux allows (107 bytes: the address holds a NUL before it) is refused
// by name, with the limit, rather than by a raw "bind: invalid argument",
// and that the longest allowed one binds.
func TestAbstractNameLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets exist only on Linux")
	}
	long := "unix:@" + strings.Repeat("x", 108)
	if _, err := localgrpc.ParseAddress(long); err == nil || !strings.Contains(err.Error(), "107") {
		t.Errorf("ParseAddress of a 108-byte abstract name: %v, want an error naming the limit", err)
	}
	srv := localgrpc.NewServer()
	defer srv.Stop()
	err := srv.Listen(long)
	var aerr *localgrpc.AddressError
	if !errors.As(err, &aerr) || !strings.Contains(err.Error(), "107") {
		t.Errorf("Listen on a 108-byte abstract name: %v, want an *AddressError naming the limit", err)
	}
	name := uniqueName(t)
	longest := "unix:@" + name + strings.Repeat("y", 107-len(name))
	if err := srv.Listen(longest); err != nil {
		t.Errorf("Listen on a 107-byte abstract name: %v", err)
	}
}
