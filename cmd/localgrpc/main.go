package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses, as the go command uses them.
const (
	exitOK      = 0
	exitFailure = 1 // the work failed
	exitUsage   = 2 // the command line is wrong
)

// run runs the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var f failure
	if errors.As(err, &f) {
		fmt.Fprintf(stderr, "localgrpc: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "localgrpc: %v\n\n%s", err, cmd.UsageString())
	return exitUsage
}

// failure marks an error of the work a command does. Any other error that
// reaches run — from cobra's parsing or from a command's checks of its
// flags — is one of usage.
type failure struct{ err error }

func (f failure) Error() string { return f.err.Error() }
func (f failure) Unwrap() error { return f.err }

// newRootCmd returns the localgrpc command and its subcommands.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "localgrpc",
		Short: "Fast, transparent gRPC calls that never leave the machine",
		// run prints errors, and usage only for usage errors.
		SilenceErrors: true,
		SilenceUsage:  true,
		// No completion subcommand until the command line settles.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.AddCommand(newBenchCmd())
	return root
}
