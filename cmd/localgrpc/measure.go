package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/load"
	"github.com/localgrpc/localgrpc/cmd/internal/matrix"
	"github.com/localgrpc/localgrpc/cmd/internal/report"
	"github.com/spf13/cobra"
)

// measureFlags are the flags of `localgrpc measure`.
type measureFlags struct {
	n, c, warmup, count int
	message             string
	timeout             time.Duration
	format              string
	compress            bool
	serverProcess       bool // serve on sockets from child processes
	output              string
	// command is the command line as the flags gave it, for the line
	// saying how a page was made.
	command string
}

func newMeasureCmd() *cobra.Command {
	var f measureFlags
	cmd := &cobra.Command{
		Use:   "measure [flags]",
		Short: "Measure every Echo server, client and address against one another",
		Long: `Measure starts the Echo API on grpc-go and on connect-go itself, on TCP, a unix
socket, an abstract socket and in-process, and grpc-go's on shm: (localgrpc's
transport between processes, which localgrpc's client alone speaks), and calls
every method with every client that can call each server: grpc-go, and
connect-go in the Connect, gRPC and gRPC-Web protocols (a grpc-go server speaks
gRPC alone; in-process, grpc-go's server is reached through its in-process
channel by grpc-go clients, and connect-go's handler through inprochttp by
connect-go's clients, with no socket and no HTTP/2 framing). For each it makes --warmup calls,
then -n calls, -c at a time, each timed alone on the goroutine that makes it,
with a context of --timeout's deadline (bench's time/op is a loop's time over
its calls, without one, on a channel of its own rather than through a
localgrpc server, so an in-process call of about a microsecond reads two to
three times bench's time/op here), and
prints the matrix of the mean time per call,
then of the p99, as markdown, or every statistic as CSV (--format csv), with
the machine and versions measured on. Collect and update send --count
requests each. Compression is off unless --compress.

Servers and clients run in this process, sharing its scheduler, heap and
garbage collector as well as the machine's processors. --server-process
measures as the Echo API's reference measured, with servers and clients in
separate processes: each server on sockets runs in a child process (this
binary, run again), the clients here. In-process calls cannot leave the
process, so the inproc rows are measured in one process either way. The output
says which way each row was measured.`,
		Example: `  localgrpc measure
  localgrpc measure --server-process
  localgrpc measure -n 5000 -c 4 --format csv > echo.csv
  localgrpc measure -o docs/measure.md          # a page: how it was made, then the tables`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.command = commandLine(cmd)
			return f.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.IntVarP(&f.n, "calls", "n", 1000, "measure `n` calls of each method in each pairing")
	fl.IntVarP(&f.c, "concurrency", "c", 1, "make `c` calls at a time")
	fl.IntVar(&f.warmup, "warmup", 100, "make `w` calls first that are not measured")
	fl.IntVar(&f.count, "count", 3, "requests per collect and update call")
	fl.StringVarP(&f.message, "message", "m", "hello world", "the requests' `text`")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "fail a call that takes longer than `d`")
	fl.StringVarP(&f.format, "format", "f", "markdown", "output format: markdown or csv")
	fl.BoolVar(&f.compress, "compress", false, "compress with gzip on every stack")
	fl.BoolVar(&f.serverProcess, "server-process", false, "serve on sockets from a child process per server, as separate processes measure")
	fl.StringVarP(&f.output, "output", "o", "", "also write the result to `FILE`: .md a page (title, how it was made, the tables), .csv every statistic")
	return cmd
}

// load is the measurement of each cell.
func (f *measureFlags) load() load.Spec {
	return load.Spec{N: f.n, C: f.c, Warmup: f.warmup, Timeout: f.timeout}
}

// conditions are how the calls are made, as the tables say.
func (f *measureFlags) conditions() matrix.Conditions {
	return matrix.Conditions{Load: f.load(), Message: f.message, Count: f.count, Compress: f.compress, ServerProcess: f.serverProcess}
}

func (f *measureFlags) check() error {
	if err := f.load().Check(); err != nil {
		return err
	}
	switch {
	case f.count < 1:
		return fmt.Errorf("--count %d: it must be at least 1", f.count)
	case !utf8.ValidString(f.message):
		// Every call would send it: refused before any, rather than left
		// to each cell's stack to refuse its own way, or not at all.
		return fmt.Errorf("-m %q: the text is not valid UTF-8, as a protobuf string must be", f.message)
	case f.timeout <= 0:
		return fmt.Errorf("--timeout %v: it must be more than 0", f.timeout)
	case f.format != "markdown" && f.format != "csv":
		return fmt.Errorf("--format %q: the formats are markdown and csv", f.format)
	}
	if f.output != "" {
		if _, ok := measureOutputFormats[strings.ToLower(filepath.Ext(f.output))]; !ok {
			return fmt.Errorf("--output %q: use .md (a page) or .csv", f.output)
		}
	}
	return nil
}

// measureOutputFormats are the formats --output writes, by extension.
var measureOutputFormats = map[string]string{".md": "markdown", ".csv": "csv"}

func (f *measureFlags) run(ctx context.Context, stdout, stderr io.Writer) error {
	if err := f.check(); err != nil {
		return err
	}
	// The file is created before any call, so that a path that cannot
	// be written fails at once rather than after the measurement.
	var out *os.File
	if f.output != "" {
		var err error
		if out, err = os.Create(f.output); err != nil {
			return failure{fmt.Errorf("--output: %w", err)}
		}
		defer out.Close()
	}
	addrs, stopServers, err := f.startServers()
	if err != nil {
		return failure{err}
	}
	var stopOnce sync.Once
	var stopErr error
	stop := func() error {
		stopOnce.Do(func() { stopErr = stopServers() })
		return stopErr
	}
	defer stop()

	m := matrix.Measurement{Conditions: f.conditions(), PID: os.Getpid(), Rows: matrix.Pairings(addrs)}
	prog := newProgress(stderr, len(m.Rows)*len(echoclient.Methods), 1, 0)
	if err := m.Run(ctx, f.dial, measureProgress{prog}); err != nil {
		return failure{err}
	}
	prog.finish()
	// A server process that failed says so, after the tables.
	stoppedErr := stop()

	m.Env = report.CurrentEnvironment([]int{runtime.GOMAXPROCS(0)})
	if f.format == "csv" {
		err = m.WriteCSV(stdout)
	} else {
		err = m.WriteMarkdown(stdout)
	}
	if err == nil && out != nil {
		if measureOutputFormats[strings.ToLower(filepath.Ext(f.output))] == "csv" {
			err = m.WriteCSV(out)
		} else {
			err = m.WritePage(out, f.command, time.Now())
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return failure{err}
	}
	switch failed := m.Failed(); {
	case m.Interrupted:
		return failure{errors.New("interrupted: the tables hold what was measured before")}
	case failed > 0:
		return failure{fmt.Errorf("%d calls failed", failed)}
	case stoppedErr != nil:
		return failure{stoppedErr}
	}
	return nil
}

// measureRowHook, if set, is called with each row before it is measured:
// the tests' look at the server behind it.
var measureRowHook func(matrix.Pairing)

// dial returns the client of row: through inprochttp if row has a
// handler, else to its address.
func (f *measureFlags) dial(row matrix.Pairing) (echoclient.Client, error) {
	if measureRowHook != nil {
		measureRowHook(row)
	}
	if row.Handler != nil {
		return echoclient.NewInprocHTTP(row.Client, row.Handler, f.compress)
	}
	return newEchoClient(row.Client, row.Addr, f.compress, nil)
}

// measureProgress shows each cell of the matrix on a progress display.
type measureProgress struct{ p *progress }

func (mp measureProgress) Start(cell int, row matrix.Pairing, m echoclient.Method) {
	mp.p.start(cell, fmt.Sprintf("%s server, %s client, %s: %s", row.Server, row.Client, row.Kind, m), 1)
}

func (mp measureProgress) Done(cell int, r load.Result) {
	mp.p.done(cell, fmt.Sprintf("mean %s, %d errors", load.FormatDuration(r.Mean()), r.Failed()))
}

// startServers serves Echo on grpc-go and on connect-go on every kind of
// address, each its own, and returns them by stack and kind once every
// server listens, with a function that stops them all. With
// --server-process each stack's server on sockets is a child process, and
// each in-process server a server of its own here. connect-go's is served
// in-process by its handler, which its clients call through inprochttp.
func (f *measureFlags) startServers() (map[string]map[string]matrix.ServedAt, func() error, error) {
	dir, err := os.MkdirTemp("", "localgrpc-measure-")
	if err != nil {
		return nil, nil, err
	}
	unique := fmt.Sprintf("localgrpc-measure-%d-%s", os.Getpid(), rand.Text()[:8])
	var stops []func() error
	stopAll := func() error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s())
		}
		os.RemoveAll(dir)
		return errors.Join(errs...)
	}
	addrs := make(map[string]map[string]matrix.ServedAt)
	add := func(stack string, served []string, pid int) error {
		for _, a := range served {
			parsed, err := localgrpc.ParseAddress(a)
			if err != nil {
				return err
			}
			addrs[stack][matrix.KindName(parsed.Kind)] = matrix.ServedAt{Addr: a, PID: pid}
		}
		return nil
	}
	for _, stack := range matrix.Servers {
		addrs[stack] = make(map[string]matrix.ServedAt)
		sockets := []string{"127.0.0.1:0", "unix:" + filepath.Join(dir, stack+".sock"), "unix:@" + unique + "-" + stack}
		if stack == stackGRPC {
			// localgrpc's own transport between processes: a localgrpc
			// Server's, for its clients.
			sockets = append(sockets, "shm:@"+unique+"-shm")
		}
		var here []string // addresses served in this process
		if stack == stackGRPC {
			here = append(here, "inproc:"+unique)
		} else {
			h, stop := f.connectInproc()
			stops = append(stops, stop)
			addrs[stack]["inproc"] = matrix.ServedAt{Addr: "inproc", PID: os.Getpid(), Handler: h}
		}
		if f.serverProcess {
			p, served, err := startServerProcess(stack, f.compress, sockets)
			if err != nil {
				stopAll()
				return nil, nil, err
			}
			stops = append(stops, p.stop)
			if err := add(stack, served, p.pid()); err != nil {
				stopAll()
				return nil, nil, err
			}
		} else {
			here = append(sockets, here...)
		}
		if len(here) == 0 {
			continue
		}
		served, stop, err := f.serveHere(stack, here)
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		stops = append(stops, stop)
		if err := add(stack, served, os.Getpid()); err != nil {
			stopAll()
			return nil, nil, err
		}
	}
	return addrs, stopAll, nil
}

// connectInproc returns the handler of a connect-go Echo server to be
// called in-process, as serve --stack connect would serve it on sockets,
// with a function that stops it.
func (f *measureFlags) connectInproc() (http.Handler, func() error) {
	sf := serveFlags{compress: f.compress, drain: defaultDrain}
	s := sf.connectServer(slog.New(slog.DiscardHandler))
	return s.handler, func() error {
		s.drain()
		return nil
	}
}

// serveHere serves Echo with stack in this process on the addresses
// listen, and returns the addresses served, with a function that stops it.
func (f *measureFlags) serveHere(stack string, listen []string) ([]string, func() error, error) {
	sf := serveFlags{compress: f.compress, drain: defaultDrain}
	log := slog.New(slog.DiscardHandler)
	s := sf.grpcServer(log)
	if stack == stackConnect {
		s = sf.connectServer(log)
	}
	if err := s.listen(listen); err != nil {
		return nil, nil, fmt.Errorf("%s server: %w", stack, err)
	}
	served := make(chan error, 1)
	go func() { served <- s.serve() }()
	return s.addrs(), func() error {
		s.drain()
		return <-served
	}, nil
}
