package main

import "syscall"

// serverProcessAttr has the kernel send a server process SIGTERM when
// the thread that started it ends, as it does when this process dies,
// however it dies (startServerProcess keeps that thread until the child
// has exited). Closing its standard input, as the kernel also does when
// this process exits, is the signal everywhere else. The child has a
// process group of its own, so that the terminal's ^C reaches this
// process alone, which stops its children once its calls have ended.
func serverProcessAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}
