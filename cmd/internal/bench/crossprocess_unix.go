//go:build unix

package bench

import "syscall"

// childAttr puts a server process in a process group of its own, so that
// the terminal's ^C reaches this process alone, which ends its server
// processes as its cases end.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
