package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every single-valued flag of every command given twice is a usage error
// that names the flag; flags of several values stay repeatable.
func TestRepeatedFlagRefused(t *testing.T) {
	var walk func(*cobra.Command)
	n := 0
	walk = func(cmd *cobra.Command) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if _, many := f.Value.(pflag.SliceValue); many || f.Name == "help" {
				return
			}
			n++
			path := strings.Fields(cmd.CommandPath())[1:]
			v := f.Value.String()
			if f.Value.Type() == "string" && v == "" {
				v = "x"
			}
			args := append(path, "--"+f.Name+"="+v, "--"+f.Name+"="+v)
			code, stdout, stderr := runCLI(t.Context(), args...)
			if code != exitUsage || !strings.Contains(stderr, "--"+f.Name) || !strings.Contains(stderr, "given again") {
				t.Errorf("%s: exit status %d, want %d, and an error naming --%s; stderr:\n%s", strings.Join(args, " "), code, exitUsage, f.Name, stderr)
			}
			if stdout != "" {
				t.Errorf("%s: stdout %s", strings.Join(args, " "), stdout)
			}
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(newRootCmd())
	if n < 10 {
		t.Errorf("only %d single-valued flags checked", n)
	}

	// The case, and a shorthand against its long name.
	for _, args := range [][]string{
		{"call", "get", "--address", "unix:@a", "--address", "unix:@b"},
		{"call", "get", "--address", "unix:@a", "-m", "x", "--message", "y"},
	} {
		code, _, stderr := runCLI(t.Context(), args...)
		if code != exitUsage || !strings.Contains(stderr, "--"+strings.TrimPrefix(args[len(args)-2], "--")) {
			t.Errorf("%s: exit status %d; stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	// Repeatable: --cpu and -o take several.
	if code, _, stderr := runCLI(t.Context(), "bench", "--list", "--cpu", "1", "--cpu", "2"); code != exitOK {
		t.Errorf("--cpu 1 --cpu 2: exit status %d; stderr:\n%s", code, stderr)
	}
}
