//go:build !purego

package handover

import "golang.org/x/sys/cpu"

// useAVX2 has ascii_amd64.s read 32 bytes a load where the CPU can.
var useAVX2 = cpu.X86.HasAVX2
