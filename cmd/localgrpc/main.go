package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var forced atomic.Bool
	exit := func(code int) {
		forced.Store(true)
		atForcedExit.run(forcedExitLimit)
		os.Exit(code)
	}
	ctx := interruptible(context.Background(), sigs, sameInterrupt, interruptGrace, os.Stderr, exit)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if forced.Load() {
		// The cleanups of a forced exit may let the command return: it
		// still ends as the forced exit says.
		code = exitFailure
	}
	os.Exit(code)
}

// sameInterrupt is how soon after a first signal a second one is taken as
// the same interrupt, not as a second. coreutils' timeout signals its
// child and then the child's process group, which holds the child: the
// command sees two signals microseconds apart (more on a busy machine)
// for one timeout. A person pressing Ctrl-C twice takes longer than this.
const sameInterrupt = 500 * time.Millisecond

// defaultGrace is how long the work may take to end after a first SIGINT
// or SIGTERM, beyond what the command's own flags let it take (a
// --benchtime run, which cannot be cut short, or serve's --drain-timeout).
const defaultGrace = 10 * time.Second

// grace is the command's grace period after a first signal, in
// nanoseconds: defaultGrace, lengthened by newRootCmd's hook once the
// flags are parsed.
var grace atomic.Int64

func init() { grace.Store(int64(defaultGrace)) }

func interruptGrace() time.Duration { return time.Duration(grace.Load()) }

// interruptible returns a context that the first signal of sigs ends, so
// that the work ends gracefully (bench reports what it measured, serve
// drains). If the work has not ended after grace(), or a second signal
// comes more than same after the first, it calls exit(exitFailure) at
// once: a run stuck in a long benchmark or a drain still ends when asked
// twice, or once and waited on. Signals within same of the first are
// the first again.
func interruptible(parent context.Context, sigs <-chan os.Signal, same time.Duration, grace func() time.Duration, stderr io.Writer, exit func(int)) context.Context {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		<-sigs
		first := time.Now()
		cancel()
		g := grace()
		t := time.NewTimer(g)
		defer t.Stop()
		for {
			select {
			case sig := <-sigs:
				if time.Since(first) <= same {
					continue
				}
				fmt.Fprintf(stderr, "\nlocalgrpc: %v again: stopping at once\n", sig)
			case <-t.C:
				fmt.Fprintf(stderr, "\nlocalgrpc: still running %v after the interrupt: stopping now\n", g)
			}
			exit(exitFailure)
			return
		}
	}()
	return ctx
}

// lengthenGrace makes the grace period after a first signal cover what
// cmd's flags let the work take to end: a run of --benchtime, a drain of
// --drain-timeout.
func lengthenGrace(cmd *cobra.Command) {
	g := defaultGrace
	for _, name := range []string{"benchtime", "drain-timeout"} {
		if fl := cmd.Flags().Lookup(name); fl != nil {
			if d, err := time.ParseDuration(fl.Value.String()); err == nil && d > 0 {
				g += d
			}
		}
	}
	grace.Store(int64(g))
}

// Exit statuses, as the go command uses them.
const (
	exitOK      = 0
	exitFailure = 1 // the work failed
	exitUsage   = 2 // the command line is wrong
)

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(goStyleFlags(root, args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var f failure
	if errors.As(err, &f) {
		fmt.Fprintf(stderr, "localgrpc: %s\n", withoutPrefix(err))
		return exitFailure
	}
	if len(args) == 0 {
		// No command: the list of commands is what the user needs next,
		// as the go command prints its own.
		fmt.Fprintf(stderr, "localgrpc: %s\n\n%s", withoutPrefix(err), cmd.UsageString())
		return exitUsage
	}
	// One line that says where the usage is, as kubectl and the go command
	// do, rather than cobra's whole usage block, whose flags push the
	// message off the screen.
	fmt.Fprintf(stderr, "localgrpc: %s\nRun '%s --help' for usage.\n", withoutPrefix(err), cmd.CommandPath())
	return exitUsage
}

// goStyleFlags rewrites the single-dash long flags that Go programs take
// (-count 5, -format=json) to the double dash cobra's parser wants, so
// that both spellings work. An argument is rewritten only if its name is
// a long flag of the command it is for; shorthands (-c 4, -o x.html) and
// everything after "--" are left alone.
func goStyleFlags(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil {
		return args
	}
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if len(name) > 1 && cmd.Flags().Lookup(name) != nil {
			out[i] = "-" + a
		}
	}
	return out
}

// withoutPrefix is err's message without the "localgrpc: " the library's
// errors begin with, which the command puts in front of every message.
func withoutPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "localgrpc: ")
}

// noArgs refuses arguments to a command that takes only flags, naming
// them: cobra's NoArgs would call the first an unknown command.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Errorf("%s takes only flags, no arguments; got %s", cmd.Name(), strings.Join(quoted, " "))
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
		PersistentPreRun:  func(cmd *cobra.Command, _ []string) { lengthenGrace(cmd) },
		Version:           version(),
		// Without a command there is nothing to do: a usage error, as
		// the go command's, rather than help and success.
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("a command is required: bench, serve, call, measure or descriptors")
		},
	}
	root.SetVersionTemplate("localgrpc {{.Version}}\n")
	root.AddCommand(newBenchCmd(), newServeCmd(), newCallCmd(), newMeasureCmd(), newDescriptorsCmd())
	setOnce(root)
	return root
}
