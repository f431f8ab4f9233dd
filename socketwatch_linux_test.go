package localgrpc_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcherEnv names the directory a watcher process watches.
const watcherEnv = "LOCALGRPC_TEST_WATCH_SOCKETS"

// nobody is the user the watcher runs as.
const nobody = 65534

// TestSocketNeverWiderThanItsMode starts servers on unix sockets, with
// umask 0 and the default mode 0600, while a process of another user
// connects to every file that appears in their directory the moment it
// appears: it must never get in, not even while a socket is being
// created.
func TestSocketNeverWiderThanItsMode(t *testing.T) {
	const starts, starters = 2000, 4
	if os.Getuid() != 0 {
		t.Skip("running a watcher as another user needs root")
	}
	// Everything the watcher runs or reads must be open to it: a
	// directory of its own, not t.TempDir's, which is private.
	top, err := os.MkdirTemp("", "localgrpc-watch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	sockets := filepath.Join(top, "sockets")
	bin := filepath.Join(top, "watcher")
	for _, d := range []string{top, sockets} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyExecutable(t, bin)

	watcher := exec.Command(bin, "-test.run=^$")
	watcher.Dir = top
	watcher.Env = append(os.Environ(), watcherEnv+"="+sockets)
	watcher.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	stdin, err := watcher.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	watcher.Stderr = &stderr
	stdout, err := watcher.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Start(); err != nil {
		t.Skipf("cannot run a process as uid %d: %v", nobody, err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "watching" {
		stdin.Close()
		watcher.Wait()
		t.Fatalf("the watcher did not start: %q; stderr:\n%s", lines.Text(), stderr.String())
	}

	// Servers start side by side, so that one is often preempted in the
	// middle of creating its socket while the watcher runs.
	old := syscall.Umask(0)
	var wg sync.WaitGroup
	for g := range starters {
		wg.Go(func() {
			for i := range starts / starters {
				srv := newEchoServer()
				if err := srv.Listen(fmt.Sprintf("unix:%s/%d-%d.sock", sockets, g, i)); err != nil {
					t.Error(err)
				}
				srv.Stop()
			}
		})
	}
	wg.Wait()
	syscall.Umask(old)

	stdin.Close() // the watcher reports and exits
	var breaches []string
	for lines.Scan() {
		breaches = append(breaches, lines.Text())
	}
	if err := watcher.Wait(); err != nil {
		t.Fatalf("the watcher failed: %v; stderr:\n%s", err, stderr.String())
	}
	if len(breaches) > 0 {
		t.Errorf("in %d starts with umask 0, a process of another user connected to a socket %d times: %q", starts, len(breaches), breaches)
	}
	if !strings.Contains(stderr.String(), "denied") {
		t.Errorf("the watcher was never refused: did it watch the right directory? stderr:\n%s", stderr.String())
	}
}

// copyExecutable copies the running test binary to path, mode 0755.
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// watchSockets is the watcher: it connects to every file created in dir,
// and to the files of directories created there, at once, printing each
// connection that succeeds, until its stdin closes. It tells on stderr
// whether it was ever refused.
func watchSockets(dir string) int {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("watching")
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	denied := false
	try := func(path string) {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
			fmt.Println(path)
			return
		}
		if !denied && errors.Is(err, fs.ErrPermission) {
			denied = true
			fmt.Fprintln(os.Stderr, "denied", path)
		}
	}
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			path := filepath.Join(dir, name)
			try(path)
			if ev.Mask&unix.IN_ISDIR != 0 {
				if entries, err := os.ReadDir(path); err == nil {
					for _, e := range entries {
						try(filepath.Join(path, e.Name()))
					}
				} else if !denied && errors.Is(err, fs.ErrPermission) {
					denied = true
					fmt.Fprintln(os.Stderr, "denied", path)
				}
			}
		}
	}
}
