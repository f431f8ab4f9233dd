//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/internal/matrix"
	"go.uber.org/goleak"
)

// peerPID is the pid of the process that listens on the unix or abstract
// socket at addr, as the kernel tells its peer.
func peerPID(addr string) (int, error) {
	a, err := localgrpc.ParseAddress(addr)
	if err != nil {
		return 0, err
	}
	network, address, _ := a.Socket()
	if network != "unix" {
		return 0, fmt.Errorf("%s is no unix socket: the kernel names no peer", addr)
	}
	conn, err := net.Dial(network, address)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return int(cred.Pid), nil
}

// gone reports whether the process pid has ended: it no longer exists, or
// is a zombie its new parent has yet to reap.
func gone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command's name, in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// TestMeasureServerProcess measures with --server-process: every row on a
// socket is measured against a server in a child process, as the kernel
// says of the unix sockets' listener, and says so; the inproc row against
// this process's; the children have ended when measure returns, and no
// goroutine is left behind.
func TestMeasureServerProcess(t *testing.T) {
	var mu sync.Mutex
	listeners := make(map[string]int) // pid by address, of the rows on unix sockets
	measureRowHook = func(row matrix.Pairing) {
		if row.Kind != "unix" && row.Kind != "abstract" && row.Kind != "shm" {
			return
		}
		pid, err := peerPID(row.Addr)
		if err != nil {
			t.Errorf("the listener of %s: %v", row.Addr, err)
		}
		mu.Lock()
		listeners[row.Addr] = pid
		mu.Unlock()
	}
	defer func() { measureRowHook = nil }()

	code, stdout, stderr := runCLI(t.Context(), "measure", "--server-process", "-n", "2", "--warmup", "0", "--count", "2", "--format", "csv")
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	checkMeasureCSV(t, records, true)

	children := make(map[string]int) // pid by stack
	for _, r := range records[1:] {
		if r[3] != "child" {
			continue
		}
		pid, _ := strconv.Atoi(r[4])
		if prev, ok := children[r[0]]; ok && prev != pid {
			t.Errorf("the %s server is in two processes, %d and %d", r[0], prev, pid)
		}
		children[r[0]] = pid
	}
	if len(children) != 2 || children[stackGRPC] == children[stackConnect] {
		t.Errorf("the servers' processes: %v, want one for each stack", children)
	}
	if len(listeners) != 5 {
		t.Errorf("listeners asked of %d socket addresses, want 5 (shm: for grpc-go's server only): %v", len(listeners), listeners)
	}
	for addr, pid := range listeners {
		if pid == os.Getpid() || !slices.Contains([]int{children[stackGRPC], children[stackConnect]}, pid) {
			t.Errorf("%s is served by pid %d; this process is %d, the children %v", addr, pid, os.Getpid(), children)
		}
	}
	for stack, pid := range children {
		if !gone(pid) {
			t.Errorf("the %s server process %d outlived measure", stack, pid)
		}
	}
	goleak.VerifyNone(t)
}

// TestMeasureServerProcessMarkdown: the tables say which rows were
// measured against a child process.
func TestMeasureServerProcessMarkdown(t *testing.T) {
	code, stdout, stderr := runCLI(t.Context(), "measure", "--server-process", "-n", "3", "--warmup", "1", "-m", "a b")
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	checkMeasureMarkdown(t, stdout, stderr, true)
}

// TestMeasureServerProcessParentKilled kills a measure that runs server
// processes, in the middle of its calls: its children end too.
func TestMeasureServerProcessParentKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Its orphans come to this process, not to init, which may not reap
	// them.
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Skipf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)

	// This test binary, as a child, runs measure: its own server
	// processes are its children.
	parent := exec.Command(exe, "measure", "--server-process", "-n", "100000000", "--warmup", "0")
	parent.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := parent.StdinPipe() // kept open: closing it would stop measure
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr := &lockedBuffer{}
	parent.Stderr = stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()

	// It starts its two servers first.
	var children []int
	for deadline := time.Now().Add(30 * time.Second); len(children) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("measure has children %v after 30s, want its 2 server processes; stderr:\n%s", children, stderr)
		}
		children = childrenOf(parent.Process.Pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	// Orphans now, they are this process's to wait for: none may live on.
	for _, pid := range children {
		exited := make(chan struct{})
		go func() {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
				t.Errorf("waiting for %d: %v", pid, err)
			}
			close(exited)
		}()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(pid, syscall.SIGKILL)
			<-exited
			t.Errorf("server process %d outlived its parent by 10s", pid)
		}
	}
}

// childrenOf are the pids of the processes whose parent is pid.
func childrenOf(pid int) []int {
	var children []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		stat, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		// After the name: state, then the parent's pid.
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		child, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err == nil && !gone(child) {
			children = append(children, child)
		}
	}
	return children
}

// TestServerProcessFails: a server process that cannot serve its
// addresses says why, and is gone.
func TestServerProcessFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := startServerProcess(stackGRPC, false, []string{"unix:" + file})
	if err == nil || !strings.Contains(err.Error(), "exited before it served") || !strings.Contains(err.Error(), "exists and is not a socket") {
		t.Errorf("startServerProcess on a file: %v", err)
	}
}
