package main

import (
	"strings"
	"testing"
)

// Every CLI error is printed without the whole usage block, naming what
// is wrong: a subcommand's errors end with "Run 'localgrpc X --help' for
// usage.", but an unknown command (or flag) at the top prints cobra's
// whole usage block after it.
func TestAttack36TopLevelErrorsWithoutUsage(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"--bogus"}, {"servee", "unix:@x"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t.Context(), args...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d", code, exitUsage)
			}
			if strings.Contains(stderr, "Usage:") || strings.Contains(stderr, "Available Commands:") {
				t.Errorf("the error is followed by the whole usage block:\n%s", stderr)
			}
			if !strings.Contains(stderr, args[0]) {
				t.Errorf("stderr does not name %q:\n%s", args[0], stderr)
			}
		})
	}
}
