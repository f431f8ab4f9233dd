//go:build !linux

package main

import "syscall"

// serverProcessAttr is nothing outside Linux: a server process ends when
// its standard input closes, as it does when this process exits.
func serverProcessAttr() *syscall.SysProcAttr { return nil }
