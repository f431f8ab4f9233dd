package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/connectserve"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	"github.com/localgrpc/localgrpc/cmd/internal/matrix"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
)

// The stacks that serve Echo, named as measure's rows name them.
const (
	stackGRPC    = matrix.GRPCServer
	stackConnect = matrix.ConnectServer
)

// defaultDrain is how long a stopping server waits for calls in flight,
// unless --drain-timeout says otherwise.
const defaultDrain = 10 * time.Second

// serveFlags are the flags of `localgrpc serve`.
type serveFlags struct {
	stack    string
	verbose  bool
	compress bool
	drain    time.Duration // how long a stopping server waits for calls in flight
	// logDrain counts the calls in flight, to log how many a drain cut
	// short ended: serve's, not measure's, whose timings it would touch.
	logDrain bool
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags] ADDRESS...",
		Short: "Serve the Echo API on grpc-go or connect-go, on any addresses at once",
		Long: `Serve serves the Echo API (echo.v1.Echo: Get, Expand, Collect, Update), with gRPC
health checking and server reflection, on every ADDRESS at once:

  unix:PATH, unix://ABSPATH    a unix socket file (mode 0600)
  unix:@NAME, unix-abstract:NAME  a Linux abstract socket
  HOST:PORT, :PORT             TCP

An in-process address (inproc:NAME) is refused: only the process serving it
could call it, and serve's makes no calls.

--stack grpc serves with grpc-go; --stack connect with connect-go, which answers
the Connect, gRPC and gRPC-Web protocols over HTTP/2 without TLS (and HTTP/1.1).
Compression is off unless --compress. It prints each address it listens on, TCP
ports resolved, and an abstract socket in both forms: unix:@NAME, which grpc-go
and grpcurl take, and unix-abstract:NAME, which clients on gRPC's C core
(Python's grpcio, C++) take. It stops gracefully on SIGINT or SIGTERM: no new
calls, and up to --drain-timeout (10s) for the calls in flight, which are then
ended.

The exit status is 2 if the command line is wrong (an address malformed, given
twice, or not one the stack serves), 1 if the machine refuses an address or
serving fails.`,
		Example: `  localgrpc serve unix:@echo 127.0.0.1:8080
  localgrpc serve --stack connect -v unix:/tmp/echo.sock :8081`,
		Args: func(cmd *cobra.Command, addrs []string) error {
			if len(addrs) == 0 {
				return errors.New("serve needs an ADDRESS to listen on: unix:PATH, unix:@NAME or HOST:PORT")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, addrs []string) error {
			return f.run(cmd.Context(), addrs, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stack, "stack", stackGRPC, "the server: grpc (grpc-go) or connect (connect-go)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log each call: method, status code, duration")
	fl.BoolVar(&f.compress, "compress", false, "allow gzip (connect-go; grpc-go compresses only if the client asks)")
	fl.DurationVar(&f.drain, "drain-timeout", defaultDrain, "how long a stopping server waits for the calls in flight before ending them")
	return cmd
}

func (f *serveFlags) run(ctx context.Context, addrs []string, stdout, stderr io.Writer) error {
	if f.stack != stackGRPC && f.stack != stackConnect {
		return fmt.Errorf("--stack %q: the stacks are %s and %s", f.stack, stackGRPC, stackConnect)
	}
	if err := checkListenAddrs(addrs); err != nil {
		return err
	}
	if f.drain < 0 {
		return fmt.Errorf("--drain-timeout %v: want a duration of 0 or more", f.drain)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	f.logDrain = true
	s := f.grpcServer(log)
	if f.stack == stackConnect {
		s = f.connectServer(log)
	}

	if err := s.listen(addrs); err != nil {
		return failure{err}
	}
	defer atForcedExit.add(s.stop)()
	for _, a := range s.addrs() {
		fmt.Fprintln(stdout, servingLine(f.stack, a))
	}
	served := make(chan error, 1)
	go func() { served <- s.serve() }()
	select {
	case err := <-served:
		return failure{err}
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "stopping: waiting for the calls in flight")
	s.drain()
	if err := <-served; err != nil {
		return failure{err}
	}
	return nil
}

// servingPrefix begins each line serve prints for an address it serves.
const servingPrefix = "serving echo.v1.Echo with "

// servingLine is the line serve prints for an address it serves: the
// address, and for an abstract socket also its unix-abstract: form, which
// clients built on gRPC's C core (Python's grpcio, C++) take and grpc-go's
// grpcurl does not (it reads it as TCP), while they read unix:@NAME as a
// socket file named "@NAME".
func servingLine(stack, addr string) string {
	line := servingPrefix + stack + " on " + addr
	if name, ok := strings.CutPrefix(addr, "unix:@"); ok {
		line += " (unix-abstract:" + name + " for grpcio, C++)"
	}
	return line
}

// servedAddress is the address a line of servingLine names, and whether
// it is such a line.
func servedAddress(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, servingPrefix)
	if !ok {
		return "", false
	}
	_, addr, ok := strings.Cut(rest, " on ")
	if !ok {
		return "", false
	}
	if strings.HasPrefix(addr, "unix:@") {
		addr, _, _ = strings.Cut(addr, " (unix-abstract:")
	}
	return addr, true
}

// checkListenAddrs says what is wrong with the addresses serve is to
// listen on, every problem at once, so that what the command line gets
// wrong is a usage error and only what the machine refuses (a port in
// use, a path that is not a socket) fails the serving. Beside what
// localgrpc.ParseListenAddresses refuses, serve refuses in-process
// addresses: only the process serving them could call them.
func checkListenAddrs(addrs []string) error {
	var bad []error
	_, err := localgrpc.ParseListenAddresses(addrs...)
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			bad = append(bad, errors.New(withoutPrefix(e)))
		}
	} else if err != nil {
		bad = append(bad, errors.New(withoutPrefix(err)))
	}
	for _, a := range addrs {
		if p, err := localgrpc.ParseAddress(a); err == nil && p.Kind == localgrpc.Inproc {
			bad = append(bad, fmt.Errorf("address %q: no other process can reach an in-process address, and serve's own makes no calls: serve on unix:@%s (abstract), unix:PATH or HOST:PORT", a, p.Name))
		}
	}
	return errors.Join(bad...)
}

// echoServer is Echo served by one of the stacks: both bind with listen,
// then serve until drain.
type echoServer struct {
	listen func(addrs []string) error
	serve  func() error // returns nil once drain has begun
	addrs  func() []string
	drain  func() // stops gracefully, ending what is left after the drain timeout
	stop   func() // stops at once, closing the listeners and removing socket files
	// handler is what a connect-go server serves, to be called
	// in-process through inprochttp; nil for grpc-go's.
	handler http.Handler
}

func (f *serveFlags) grpcServer(log *slog.Logger) echoServer {
	var calls inFlight
	opts := []localgrpc.ServerOption{localgrpc.WithHealth(), localgrpc.WithReflection(), localgrpc.WithLogger(log)}
	if f.logDrain {
		opts = append(opts, localgrpc.WithServerUnaryInterceptor(calls.grpcUnary), localgrpc.WithServerStreamInterceptor(calls.grpcStream))
	}
	if f.verbose {
		opts = append(opts, localgrpc.WithServerUnaryInterceptor(grpcUnaryLogger(log)), localgrpc.WithServerStreamInterceptor(grpcStreamLogger(log)))
	}
	srv := localgrpc.NewServer(opts...)
	echov1.RegisterEchoServer(srv, echo.Server{})
	return echoServer{
		listen: func(addrs []string) error { return srv.Listen(addrs...) },
		serve: func() error {
			// A signal may stop the server before Serve runs.
			if err := srv.Serve(context.Background()); !errors.Is(err, grpc.ErrServerStopped) {
				return err
			}
			return nil
		},
		addrs: srv.Addrs,
		drain: func() {
			// Stop cuts the drain short; Echo's handlers honour the
			// cancellation it brings, so GracefulStop then returns.
			t := time.AfterFunc(f.drain, func() {
				if f.logDrain {
					calls.logEnded(log, f.drain)
				}
				srv.Stop()
			})
			defer t.Stop()
			srv.GracefulStop()
		},
		stop: srv.Stop,
	}
}

func (f *serveFlags) connectServer(log *slog.Logger) echoServer {
	var calls inFlight
	var opts []connect.HandlerOption
	if f.logDrain {
		opts = append(opts, connect.WithInterceptors(calls.connect()))
	}
	if !f.compress {
		opts = append(opts, connect.WithCompression("gzip", nil, nil))
	}
	if f.verbose {
		opts = append(opts, connect.WithInterceptors(connectLogger{log}))
	}
	path, handler := echov1connect.NewEchoHandler(echoconnect.Server{}, opts...)
	srv := connectserve.New([]connectserve.Service{{Name: echov1connect.EchoName, Path: path, Handler: handler}}, 0o600, opts...)
	return echoServer{
		listen: func(addrs []string) error { return srv.Listen(addrs...) },
		serve: func() error {
			if err := srv.Serve(context.Background()); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
		addrs: srv.Addrs,
		drain: func() {
			// The calls are counted before the timeout ends them:
			// Shutdown closes the connections before it returns.
			ctx, cancel := context.WithCancel(context.Background())
			t := time.AfterFunc(f.drain, func() {
				if f.logDrain {
					calls.logEnded(log, f.drain)
				}
				cancel()
			})
			srv.Shutdown(ctx)
			t.Stop()
			cancel()
		},
		stop:    srv.Close,
		handler: srv.Handler(),
	}
}
