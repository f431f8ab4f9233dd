//go:build !unix

package bench

import "syscall"

// childAttr is nothing where there is no process group to set.
func childAttr() *syscall.SysProcAttr { return nil }
